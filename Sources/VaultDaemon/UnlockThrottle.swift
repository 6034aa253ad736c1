import Foundation
import Synchronization
import VaultCore

/// Slows down passphrase guessing, as ssh-agent does after failed unlocks: after the n-th failure in a
/// row the next attempt must wait `base · 2^(n-1)` seconds, capped at `maximum`. Time comes from the
/// injected clock, so tests drive it without sleeping.
final class UnlockThrottle: Sendable {
    private struct State {
        var failures = 0
        var notBefore: Date?
    }

    private let clock: any VaultClock
    private let base: TimeInterval
    private let maximum: TimeInterval
    private let state = Mutex(State())

    init(clock: any VaultClock, base: TimeInterval = 1, maximum: TimeInterval = 60) {
        self.clock = clock
        self.base = base
        self.maximum = maximum
    }

    /// Seconds to wait before another attempt is accepted, or nil when one may be made now.
    func waitBeforeNextAttempt() -> TimeInterval? {
        let now = clock.now
        return state.withLock { state in
            guard let notBefore = state.notBefore, notBefore > now else { return nil }
            return notBefore.timeIntervalSince(now)
        }
    }

    func recordFailure() {
        let now = clock.now
        state.withLock { state in
            state.failures += 1
            let delay = min(maximum, base * pow(2, Double(state.failures - 1)))
            state.notBefore = now.addingTimeInterval(delay)
        }
    }

    func recordSuccess() {
        state.withLock { $0 = State() }
    }
}
