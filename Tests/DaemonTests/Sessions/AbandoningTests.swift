import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultTesting
@testable import VaultDaemon

/// The daemon's races: an operation that may hang (a keyring call) against cancellation, or against
/// a deadline on the injected clock (``DeadlineRace``, the one deadline race). Driven by a manual
/// clock, never by real time.
@Suite(.timeLimit(.minutes(20))) struct AbandoningTests {
    struct TimedOut: Error {}

    /// An operation that ignores cancellation and hangs until the test lets it go.
    final class Hang: Sendable {
        private let waiter = Locked<CheckedContinuation<Void, Never>?>(nil)
        private let started = Locked(false)
        var hasStarted: Bool { started.withLock { $0 } }

        func run() async -> Int {
            await withCheckedContinuation { continuation in
                waiter.withLock { $0 = continuation }
                started.withLock { $0 = true }
            }
            return 1
        }

        func release() {
            waiter.withLock { $0 }?.resume()
        }
    }


    @Test func theOperationsAnswerWinsAndTheDeadlineIsCancelled() async throws {
        let sleeper = ManualSleepClock()
        let value = try await DeadlineRace.run(limit: .seconds(5), clock: sleeper, { 42 }) { .failure(TimedOut()) }
        #expect(value == 42)
        // The deadline's sleep is cancelled, not awaited: it ends on its own, soon after.
        try await waitUntil("the deadline's sleep to be cancelled") { sleeper.sleeping == 0 }
    }

    @Test func theDeadlineOnTheInjectedClockWinsOverAHungOperation() async throws {
        let sleeper = ManualSleepClock()
        let clock = ManualClock(mirror: sleeper.reach)
        let hang = Hang()
        defer { hang.release() }
        let race = Task { try await DeadlineRace.run(limit: .seconds(5), clock: sleeper, { await hang.run() }) { .failure(TimedOut()) } }
        try await waitUntil("the deadline to arm and the operation to start") { sleeper.sleeping == 1 && hang.hasStarted }
        clock.advance(by: 4)
        #expect(sleeper.sleeping == 1, "the deadline ended early")
        clock.advance(by: 1)
        await #expect(throws: TimedOut.self) { try await race.value }
    }

    @Test func aCancelledCallerStopsWaitingForAHungOperation() async throws {
        let hang = Hang()
        defer { hang.release() }
        let call = Task { try await abandoningOnCancel { await hang.run() } }
        try await waitUntil("the operation to start") { hang.hasStarted }
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
    }

    @Test func anOperationsErrorIsThrown() async throws {
        await #expect(throws: TimedOut.self) {
            try await abandoningOnCancel { () async throws -> Int in throw TimedOut() }
        }
    }
}
