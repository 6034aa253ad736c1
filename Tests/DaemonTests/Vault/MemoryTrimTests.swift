import Foundation
import ServiceLifecycleTestKit
import Synchronization
import Testing
import VaultCrypto
import VaultTesting
@testable import VaultDaemon

/// The idle trim's rule, on an injected clock that moves only when the test moves it: one trim once
/// 2 s have passed since the last request (not at 1.9 s), none while the daemon stays idle, and none
/// while requests keep coming.
@Suite(.timeLimit(.minutes(20))) struct MemoryTrimTests {
    final class Counter: Sendable {
        private let count = Atomic(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    final class World: Sendable {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let sleeper = ManualSleepClock()
        let clock: ManualClock
        let activity: ActivityClock
        let trims = Counter()
        let service: MemoryTrim

        init() {
            clock = ManualClock(start: start, mirror: sleeper.reach)
            activity = ActivityClock(clock: clock)
            var service = MemoryTrim(activity: activity, sleeper: sleeper)
            service.trim = { [trims] in trims.add() }
            self.service = service
        }

        var trimCount: Int { trims.value }

        /// Moves the clock to `seconds` after the start (exact: no sum of fractions drifts).
        func set(to seconds: Double) { clock.set(to: start.addingTimeInterval(seconds)) }

        /// Waits, in real time, for the service to react; the clock stands still meanwhile, so how
        /// long the machine takes changes nothing the service sees. Only a service that never
        /// reacts reaches the cap.
        func eventually(_ condition: () -> Bool) async -> Bool {
            for _ in 0..<2000 {
                if condition() { return true }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return condition()
        }

        /// A request at `seconds`, then waits until the service sleeps again (its `sleepsAfter`th
        /// sleep), so the next move of the clock finds it asleep.
        func request(at seconds: Double, thenSleep sleepsAfter: Int) async -> Bool {
            set(to: seconds)
            activity.touch()
            return await eventually { sleeper.sleepsStarted == sleepsAfter && sleeper.sleeping == 1 }
        }

        /// Runs the service while `body` drives it, then shuts it down gracefully.
        func running(_ body: () async throws -> Void) async throws {
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await self.service.run() }
                    try await body()
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test func aRequestFollowedByTwoQuietSecondsTrimsTheHeapOnce() async throws {
        let world = World()
        try await world.running {
            try #require(await world.request(at: 0, thenSleep: 1), "the service did not wait for quiet after a request")
            world.set(to: 1.9)
            // Moving the clock ends every sleep due by then at once: a sleep still pending did not end.
            #expect(world.sleeper.sleeping == 1 && world.trimCount == 0, "the service woke before 2 quiet seconds")
            world.set(to: 2)
            #expect(await world.eventually { world.trimCount == 1 }, "no trim at 2 quiet seconds")
            world.set(to: 62)
            try await Task.sleep(for: .milliseconds(100))
            #expect(world.trimCount == 1 && world.sleeper.sleeping == 0, "trimmed again without a new request")
        }
    }

    @Test func anIdleDaemonNeverTrims() async throws {
        let world = World()
        try await world.running {
            for minute in 1...5 { world.set(to: Double(minute * 60)) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(world.trimCount == 0 && world.sleeper.sleepsStarted == 0)
        }
    }

    @Test func requestsComingEverySecondPutTheTrimOff() async throws {
        let world = World()
        try await world.running {
            try #require(await world.request(at: 0, thenSleep: 1), "the service did not wait for quiet after a request")
            // Each second a request; the service wakes 2 s after the one it slept on, finds a newer
            // one, and sleeps again (its next sleep) without trimming.
            for second in 1...5 {
                world.set(to: Double(second))
                if second >= 2 {
                    try #require(await world.eventually { world.sleeper.sleepsStarted == second && world.sleeper.sleeping == 1 },
                                 "the service did not go back to sleep at \(second) s")
                }
                if second <= 4 { world.activity.touch() }
            }
            #expect(world.trimCount == 0, "trimmed while requests still came")
            world.set(to: 5.9)
            #expect(world.sleeper.sleeping == 1 && world.trimCount == 0, "the service woke before 2 s after the last request")
            world.set(to: 6)
            #expect(await world.eventually { world.trimCount == 1 }, "no trim 2 s after the last request")
            try await Task.sleep(for: .milliseconds(100))
            #expect(world.trimCount == 1, "trimmed more than once after the requests stopped")
        }
    }

    /// The code-page release, in this test process: it unmaps megabytes of the test binary's and
    /// libraries' code, and everything still runs and reads the same afterwards: code, constants
    /// (libsodium's tables), and data the dynamic linker relocated (a global array of strings).
    @Test func releasingCodePagesShrinksResidentMemoryAndChangesNothing() throws {
        let key = SecureBytes(count: 32) { bytes in for index in bytes.indices { bytes[index] = UInt8(index) } }
        let tagBefore = KeyedHash.tag(key: key, context: "release-test", parts: [Array("abc".utf8)])
        let namesBefore = Self.names.map { $0 + "!" }
        let residentBefore = try #require(Self.residentFileKiB())

        let advised = MemoryTrim.releaseCodePages()
        let residentAfter = try #require(Self.residentFileKiB())

        #expect(advised > 4 << 20, "advised only \(advised) bytes: the test binary alone has more code")
        #expect(residentAfter < residentBefore - 1024, "file-backed memory went from \(residentBefore) to \(residentAfter) KiB")
        #expect(KeyedHash.tag(key: key, context: "release-test", parts: [Array("abc".utf8)]) == tagBefore)
        #expect(Self.names.map { $0 + "!" } == namesBefore)
        #expect(Self.names == ["retrieve", "store", "delete"])
    }

    static let names = ["retrieve", "store", "delete"]

    /// RssFile of this process, in KiB.
    static func residentFileKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssFile:") }) else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }
}
