import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import VaultCore

/// Makes a scrape cost the same however often it comes: the store's figures (the revocation
/// backlog, the logins in doubt — count queries on the fleet's database) are read again at most
/// once every ``interval`` on the daemon's clock; scrapes in between serve the gauges as they are.
/// The session manager's background work sets them too, at each of its rounds.
///
/// ```swift
/// let figures = StoreFigureCache(clock: clock) { await sessions.recordStoreMetrics() }
/// await figures.refreshIfStale()   // before each scrape
/// ```
///
/// Without it anyone who can reach the endpoint turns scrapes into database transactions: 2,930
/// scrapes a second from another uid made 51,504 transactions on the fleet's database in 10 s.
/// One refresh runs at a time; a clock that went back counts as stale.
final class StoreFigureCache: Sendable {
    /// How old the store's figures in a scrape may be.
    static let interval: TimeInterval = 5

    private let clock: any VaultClock
    private let record: @Sendable () async -> Void
    private let readAt = Mutex<Date?>(nil)

    init(clock: any VaultClock, record: @escaping @Sendable () async -> Void) {
        self.clock = clock
        self.record = record
    }

    /// Reads the store's figures if the last read is ``interval`` old or more (or none was made);
    /// otherwise returns at once.
    func refreshIfStale() async {
        let now = clock.now
        let due = readAt.withLock { last -> Bool in
            if let last, last <= now, now.timeIntervalSince(last) < Self.interval { return false }
            last = now
            return true
        }
        if due { await record() }
    }
}
