import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A login claimed for its proactive refresh, with the lease the claim took on it.
public struct DueRefresh: Sendable, Equatable {
    /// The login's lease, as ``LoginLeases/claimRefresh(of:owner:duration:)`` would have granted it.
    public let lease: RefreshLease
    /// As ``LeaseClaim/granted(_:answersLost:)`` counts them.
    public let answersLost: Int

    public init(lease: RefreshLease, answersLost: Int) {
        self.lease = lease
        self.answersLost = answersLost
    }
}

/// The proactive-refresh schedule of a login store: the time each login is due is written with the
/// login (``StoreOptions/refreshDueAt``, in the same step as its write), and any session manager
/// sharing the store claims due logins together with their refresh lease, so each due login is
/// refreshed by one manager of all, whichever wrote it. No manager needs to have read a login to
/// refresh it in time.
///
/// ```swift
/// try await store.store(record, for: item, options: StoreOptions(expiresAt: end, refreshDueAt: expiry - lead))
/// for due in try await store.claimDueRefreshes(limit: 8, owner: me, duration: 30) {
///     refresh(due.lease.item, holding: due.lease)          // as after a granted claimRefresh
/// }
/// ```
///
/// Guarantees every conformer keeps:
/// - A claim is one atomic step: it takes logins whose due time has come by the store's clock (the
///   `VaultClock` the due times were computed on) and whose lease is free (none, or run out), earliest
///   first, and grants each one's lease exactly as ``LoginLeases/claimRefresh(of:owner:duration:)``
///   would. Two claimers never get the same login, and a claimed login is not claimed again before
///   its lease ends. Its holder writes it (a new due time), deletes it, or postpones it; a holder
///   that died leaves it due, and the claim after its lease is the one retry of a refresh in doubt.
/// - Every write of a login sets its due time from its options (nil: never due); a delete removes it.
/// - Nothing here waits for a provider.
///
/// Do not claim more logins than can be asked for at once: each lease runs from the claim, so
/// every provider request must start right after it.
public protocol DueRefreshes: LoginLeases {
    /// Up to `limit` due logins, each now leased to `owner` for `duration` seconds. One atomic step.
    func claimDueRefreshes(limit: Int, owner: String, duration: TimeInterval) async throws -> [DueRefresh]

    /// Moves the due time of `lease`'s login on to `date` (never earlier, and never for a login
    /// without one), while `lease` is still the latest: a refresh that failed for now is due again
    /// after the hold-back, for every manager sharing the store.
    func postponeRefresh(_ lease: RefreshLease, until date: Date) async throws

    /// The earliest due time of the logins a claim may take, now or later, or nil when there are
    /// none. A login whose lease is live is left out: its holder writes or postpones it.
    func earliestRefreshDue() async throws -> Date?

    /// For a store that keeps due times in memory only (``LocalLoginLeases``): the due time of a
    /// login it holds (and the item's expiry), as the session manager reads it at start-up. A store
    /// that writes due times with its rows ignores it.
    func restoreRefreshDue(_ date: Date?, of item: ItemKey, itemExpiresAt: Date?) async throws

    /// Whether other processes write logins here (a shared database): then a manager looks for due
    /// logins from time to time, not only when it knows of one it wrote.
    var dueRefreshesAreShared: Bool { get }
}
