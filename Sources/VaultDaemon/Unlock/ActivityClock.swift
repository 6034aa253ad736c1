import VaultCrypto
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import VaultCore

/// Remembers when the vault was last used, for auto-lock after N idle minutes, and wakes the
/// ``MemoryTrim`` service when a request comes after a quiet spell.
final class ActivityClock: Sendable {
    private let clock: any VaultClock
    private let last: Locked<Date>
    /// Yields on every request; keeps one (a burst is one wake-up).
    let requests: AsyncStream<Void>
    private let requested: AsyncStream<Void>.Continuation

    init(clock: any VaultClock) {
        self.clock = clock
        last = Locked(clock.now)
        (requests, requested) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func touch() {
        let now = clock.now
        last.withLock { $0 = now }
        requested.yield()
    }

    /// When the last request came (or the start).
    var lastTouch: Date { last.withLock { $0 } }

    /// Seconds since the last request (or since start).
    func secondsSinceLastTouch() -> TimeInterval {
        clock.now.timeIntervalSince(last.withLock { $0 })
    }

    /// Seconds until the vault should lock, or nil when auto-lock is off; ≤ 0 means lock now.
    func secondsUntilAutoLock(idleMinutes: Int) -> TimeInterval? {
        guard idleMinutes > 0 else { return nil }
        let deadline = last.withLock { $0 }.addingTimeInterval(TimeInterval(idleMinutes * 60))
        return deadline.timeIntervalSince(clock.now)
    }
}
