import Synchronization
import Testing
@testable import VaultSession

/// The signal that wakes the daemon's session driver is raised on every change of the schedule (a
/// login tracked, forgotten or refreshed): for the daemon's whole life, each raise must cost what
/// the first did.
@Suite(.timeLimit(.minutes(1))) struct ScheduleSignalTests {
    final class Calls: Sendable {
        let count = Atomic<Int>(0)
    }

    /// A raise that walked every earlier raise (the closure kept bare in the lock grew two thunks
    /// per raise) takes minutes for these 100,000 and hits the suite's limit; each raise here is one call.
    @Test func theObserverIsCalledOncePerRaiseAtTheSameCostHoweverManyCameBefore() async {
        let signal = ScheduleSignal()
        let calls = Calls()
        signal.observe { calls.count.add(1, ordering: .relaxed) }
        var raised = 0
        for _ in 0..<100_000 where !Task.isCancelled {
            signal.changed()
            raised += 1
        }
        #expect(raised == 100_000, "the raises did not finish within the limit")
        #expect(calls.count.load(ordering: .relaxed) == 100_000)
    }

    @Test func aNewObserverReplacesTheOld() {
        let signal = ScheduleSignal()
        let first = Calls(), second = Calls()
        signal.observe { first.count.add(1, ordering: .relaxed) }
        signal.changed()
        signal.observe { second.count.add(1, ordering: .relaxed) }
        signal.changed()
        signal.changed()
        #expect(first.count.load(ordering: .relaxed) == 1)
        #expect(second.count.load(ordering: .relaxed) == 2)
    }
}
