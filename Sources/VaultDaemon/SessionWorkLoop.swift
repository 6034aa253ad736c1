import Foundation
import Logging
import Synchronization
import VaultCore
import VaultSession

/// Drives the session manager's background work — proactive refresh, wiping logins that ended,
/// retrying queued revocations — by sleeping until its next deadline, as ssh-agent's reaper does,
/// rather than polling. The schedule lives in ``SessionManager`` (driven by tests with a manual
/// clock); this loop only sleeps, at most a minute at a time so a changed wall clock is noticed,
/// and wakes early whenever the schedule changes.
enum SessionWorkLoop {
    static func run(_ sessions: SessionManager, clock: any VaultClock) async {
        let wake = WakeSignal()
        await sessions.observeSchedule { wake.signal() }
        while !Task.isCancelled {
            await sessions.runDueWork()
            let next = await sessions.nextWakeUp()
            let seconds = next.map { $0.timeIntervalSince(clock.now) } ?? 60
            // Work still due right after a round means it could not run (the vault is locked):
            // wait for a schedule change (an unlock) instead of spinning.
            await wake.wait(upTo: seconds > 0 ? min(seconds, 60) : 30)
        }
    }
}

/// A one-slot wake-up: `signal()` ends the current (or next) `wait`.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    func wait(upTo seconds: TimeInterval) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow {
                continuation.resume()
                return
            }
            Task {
                try? await Task.sleep(for: .seconds(max(seconds, 0.01)))
                let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
    }
}
