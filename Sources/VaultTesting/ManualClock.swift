import VaultCrypto
import FoundationEssentials
import Synchronization
import VaultCore

/// A clock that moves only when a test moves it.
///
/// ```swift
/// let clock = ManualClock()
/// clock.advance(by: 3600)   // an hour passes, instantly
/// ```
///
/// With a `mirror`, every change is also reported to it — for example to write the time into the
/// file that a daemon process started with `--unsafe-clock-file` reads.
public final class ManualClock: VaultClock {
    private let current: Locked<Date>
    private let mirror: (@Sendable (Date) -> Void)?

    /// Starts at `start`; by default a fixed instant, so runs are repeatable.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000), mirror: (@Sendable (Date) -> Void)? = nil) {
        current = Locked(start)
        self.mirror = mirror
        mirror?(start)
    }

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        let date = current.withLock { date -> Date in
            date = date.addingTimeInterval(seconds)
            return date
        }
        mirror?(date)
    }

    public func set(to date: Date) {
        current.withLock { $0 = date }
        mirror?(date)
    }
}
