import VaultCrypto
import Synchronization

/// A one-slot wake-up for one waiting loop: ``signal()`` ends the current wait, or the next one when
/// nobody is waiting; several signals before a wait count as one.
///
/// ```swift
/// let wake = WakeSignal()
/// sessions.observeSchedule { wake.signal() }
/// await wake.wait(for: .seconds(60), on: clock)   // a signal, 60 s on `clock`, or cancellation
/// ```
///
/// Waits end at once when their task is cancelled, so a service that waits here stops promptly on
/// graceful shutdown. Only one task may wait at a time.
final class WakeSignal: Sendable {
    private enum State {
        case idle
        case pending
        case waiting(CheckedContinuation<Void, Never>)
    }
    private let state = Locked(State.idle)

    init() {}

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard case .waiting(let waiter) = state else {
                state = .pending
                return nil
            }
            state = .idle
            return waiter
        }
        waiter?.resume()
    }

    /// Returns on a signal (now, or given since the last wait), after `duration` on `clock`, or on
    /// cancellation, whichever comes first.
    func wait<C: Clock>(for duration: Duration, on clock: C) async where C.Duration == Duration {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(for: duration) }
            group.addTask { await self.next() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns on a signal or on cancellation.
    func next() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if case .pending = state {
                        state = .idle
                        return true
                    }
                    // Cancelled before the continuation was stored: the handler found nothing to resume.
                    if Task.isCancelled { return true }
                    state = .waiting(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard case .waiting(let waiter) = state else { return nil }
                state = .idle
                return waiter
            }
            waiter?.resume()
        }
    }
}
