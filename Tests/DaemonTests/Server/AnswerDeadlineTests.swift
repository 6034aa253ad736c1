import Foundation
import Synchronization
import Testing
import VaultAPI
@testable import VaultDaemon
import VaultSession
import VaultTesting

/// The daemon answers a session call within its deadline (issue 34, point 13b): past it, the caller
/// is told `offline` "ask again" while the refresh goes on; the client waits longer than that.
@Suite(.timeLimit(.minutes(20))) struct AnswerDeadlineTests {
    @Test func theClientWaitsLongerThanTheDaemonTakesToAnswer() {
        #expect(SessionDeadlines.clientWait > SessionDeadlines.daemonAnswer)
        #expect(AnswerDeadline(clock: ContinuousClock()).limit == SessionDeadlines.daemonAnswer)
    }

    @Test func aRefreshPastTheDeadlineIsAnsweredAskAgainAndGoesOn() async throws {
        let clock = ManualSleepClock()
        let deadline = AnswerDeadline(limit: .seconds(60), clock: clock)
        let gate = Gate()
        let finished = Atomic(false)
        let caller = Task {
            try await deadline.bounded {
                await gate.wait()
                finished.store(true, ordering: .sequentiallyConsistent)
                return .reauthRequired(.noSession)
            }
        }
        try await clock.waitUntilSleeping(1, "the answer deadline to start")
        clock.reach(Date(timeIntervalSince1970: 59))  // a ManualSleepClock starts at 1970
        #expect(clock.sleeping == 1, "the deadline came before its time")
        clock.reach(Date(timeIntervalSince1970: 60))
        let answer = try await caller.value
        guard case .offline(nil, let reason) = answer else {
            Issue.record("answered \(answer)")
            return
        }
        #expect(reason.contains("more than 60 s") && reason.contains("ask again"), "\(reason)")
        let finishedEarly = finished.load(ordering: .sequentiallyConsistent)
        #expect(!finishedEarly)
        // The refresh was not cancelled: it ends on its own.
        await gate.open()
        try await waitUntil("the refresh to finish after its caller was answered") { finished.load(ordering: .sequentiallyConsistent) }
    }

    @Test func anAnswerBeforeTheDeadlineIsReturnedAndTheTimerStops() async throws {
        let clock = ManualSleepClock()
        let deadline = AnswerDeadline(limit: .seconds(60), clock: clock)
        let answer = try await deadline.bounded { .reauthRequired(.noSession) }
        guard case .reauthRequired(.noSession) = answer else {
            Issue.record("answered \(answer)")
            return
        }
        try await waitUntil("the deadline's timer to stop") { clock.sleeping == 0 }
    }

    @Test func cancellingTheCallerCancelsTheRefreshAndAnswersAtOnce() async throws {
        let clock = ManualSleepClock()
        let deadline = AnswerDeadline(limit: .seconds(60), clock: clock)
        let started = Atomic(false), cancelled = Atomic(false)
        let caller = Task {
            try await deadline.bounded {
                started.store(true, ordering: .sequentiallyConsistent)
                do {
                    try await clock.sleep(for: .seconds(3600))  // a refresh that would take an hour
                } catch {
                    cancelled.store(true, ordering: .sequentiallyConsistent)
                    throw error
                }
                return .reauthRequired(.noSession)
            }
        }
        try await waitUntil("the refresh and the deadline to sleep") { started.load(ordering: .sequentiallyConsistent) && clock.sleeping == 2 }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        try await waitUntil("the refresh to see its cancellation") { cancelled.load(ordering: .sequentiallyConsistent) }
        try await waitUntil("the deadline's timer to stop") { clock.sleeping == 0 }
    }

    @Test func anErrorIsPassedOn() async throws {
        struct Failed: Error {}
        let deadline = AnswerDeadline(limit: .seconds(60), clock: ManualSleepClock())
        await #expect(throws: Failed.self) { try await deadline.bounded { throw Failed() } }
    }
}
