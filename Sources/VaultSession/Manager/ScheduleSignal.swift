import FoundationEssentials
import Synchronization

/// Tells whoever drives ``SessionManager/runDueWork()`` that the schedule changed, so a driver
/// asleep until the last ``SessionManager/nextWakeUp()`` can look again early. Every part of the
/// manager that moves a wake-up (the login book, the revocation sender) calls it.
final class ScheduleSignal: Sendable {
    /// The observer in a struct of its own: a bare closure in the lock's generic storage would be
    /// wrapped in two more reabstraction thunks at every `withLock` (its `inout` access converts it
    /// each way), so each call would walk a chain as long as all the calls before it.
    private struct Observer {
        let notify: @Sendable () -> Void
    }

    private let observer = Mutex<Observer?>(nil)

    /// Replaces the observer.
    func observe(_ observer: @escaping @Sendable () -> Void) {
        self.observer.withLock { $0 = Observer(notify: observer) }
    }

    func changed() {
        // Called with the lock given back: the observer may take locks of its own.
        observer.withLock { $0 }?.notify()
    }
}

extension Clock where Duration == Swift.Duration {
    /// Sleeps `seconds`, rounded up to the millisecond: a provider's polling interval and a lease's
    /// recheck come in seconds.
    func sleep(seconds: TimeInterval) async throws {
        try await sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
    }
}
