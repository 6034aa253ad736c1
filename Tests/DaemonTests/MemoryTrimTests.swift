import Foundation
import ServiceLifecycleTestKit
import Synchronization
import Testing
import VaultCrypto
@testable import VaultDaemon

/// The idle trim's rule, on the daemon's file clock (the test moves time by writing the file): one
/// trim after a request once 2 s pass without another, none while the daemon stays idle, and none
/// while requests keep coming.
@Suite struct MemoryTrimTests {
    final class Counter: Sendable {
        private let count = Atomic(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    final class World: Sendable {
        let path: String
        let activity: ActivityClock
        let trims = Counter()
        let service: MemoryTrim
        private let now = Mutex(1_000_000.0)

        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("sv-trim-\(UUID().uuidString.prefix(8))").path
            try "1000000".write(toFile: path, atomically: true, encoding: .utf8)
            let file = FileClock(path: path)
            activity = ActivityClock(clock: file)
            var service = MemoryTrim(activity: activity, sleeper: FileSleepClock(file: file, pollInterval: .milliseconds(5)))
            service.trim = { [trims] in trims.add() }
            self.service = service
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        func advance(by seconds: Double) {
            let time = now.withLock { $0 += seconds; return $0 }
            try? "\(time)".write(toFile: path, atomically: true, encoding: .utf8)
        }

        var trimCount: Int { trims.value }

        /// Polls `condition` while the file clock keeps moving (1 s every 50 ms of real time): the
        /// service measures its quiet time from when its sleep starts, so on a loaded machine a
        /// sleep that starts after the test's last jump of the clock needs the clock to move on.
        func eventuallyAsTimePasses(_ condition: () -> Bool) async -> Bool {
            for _ in 0..<100 {
                if condition() { return true }
                try? await Task.sleep(for: .milliseconds(50))
                advance(by: 1)
            }
            return condition()
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
        let world = try World()
        try await world.running {
            world.activity.touch()
            world.advance(by: 3)
            #expect(await world.eventuallyAsTimePasses { world.trimCount == 1 }, "no trim after 3 quiet seconds")
            world.advance(by: 60)
            try await Task.sleep(for: .milliseconds(100))
            #expect(world.trimCount == 1, "trimmed again without a new request")
        }
    }

    @Test func anIdleDaemonNeverTrims() async throws {
        let world = try World()
        try await world.running {
            for _ in 0..<5 { world.advance(by: 60) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(world.trimCount == 0)
        }
    }

    @Test func requestsComingEverySecondPutTheTrimOff() async throws {
        let world = try World()
        try await world.running {
            for _ in 0..<4 {
                world.activity.touch()
                world.advance(by: 1)
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(world.trimCount == 0, "trimmed while requests still came")
            world.advance(by: 2)
            #expect(await world.eventuallyAsTimePasses { world.trimCount == 1 }, "no trim once the requests stopped")
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
