import Foundation
import Synchronization
import VaultCore

/// A clock that moves only when a test moves it.
///
/// ```swift
/// let clock = ManualClock()
/// clock.advance(by: 3600)   // an hour passes, instantly
/// ```
public final class ManualClock: VaultClock {
    private let current: Mutex<Date>

    /// Starts at `start`; by default a fixed instant, so runs are repeatable.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    public func set(to date: Date) {
        current.withLock { $0 = date }
    }
}
