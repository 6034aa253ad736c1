import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// ``LoginLeases`` in process memory over any ``TokenStore``: the lease of a store that one
/// process owns (the embedded vault, the in-memory store). Every session manager sharing one
/// instance refreshes each login once; the leases die with the process, which is right for a store
/// no other process writes.
///
/// ```swift
/// let logins = LocalLoginLeases(wrapping: vault, clock: clock)
/// let sessions = try SessionManager(store: logins, transport: transport, clock: clock)
/// ```
///
/// Every write and delete of a leased item must go through this instance (that is what fences a
/// stale holder); items without a lease pass straight through.
///
/// It is the store's ``DueRefreshes`` too: due times live here, set by each write through it, and
/// die with the process like the leases; the session manager gives them back at start-up
/// (``restoreRefreshDue(_:of:itemExpiresAt:)``) from the logins it reads.
public actor LocalLoginLeases: DueRefreshes {
    private struct Entry {
        var lease: RefreshLease?
        /// The lease's request was recorded and the lease neither stored nor released: its
        /// holder's answer is unknown.
        var unresolved = false
        /// Answers known to be lost, one after another.
        var lost = 0
    }

    private let inner: any TokenStore
    private let clock: any VaultClock
    private var entries: [ItemKey: Entry] = [:]
    /// Each due login's due time, and its item's expiry (a login the store purged is never due).
    private var dues: [ItemKey: (at: Date, itemExpiresAt: Date?)] = [:]
    /// One counter for all items, so a generation is never granted twice, even after a delete.
    private var lastGeneration: UInt64 = 0
    /// Claims, writes and deletes of one item take turns, so a fenced write is one step, as a
    /// transaction is in a database.
    private let turns = KeyedLock<ItemKey>()
    private var watchers: [ItemKey: [UInt64: AsyncStream<Void>.Continuation]] = [:]
    private var nextWatcher: UInt64 = 0

    public init(wrapping store: any TokenStore, clock: any VaultClock) {
        inner = store
        self.clock = clock
    }

    // MARK: LoginLeases

    public func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim {
        guard duration > 0 else { throw VaultError.invalidArgument("a refresh lease must last longer than 0 seconds") }
        return try await turns.withLock(item) {
            // As a database's UPDATE finds no row: an item deleted since the caller read it has no lease.
            _ = try await inner.retrieve(item)
            return grant(item, owner: owner, duration: duration)
        }
    }

    private func grant(_ item: ItemKey, owner: String, duration: TimeInterval) -> LeaseClaim {
        let now = clock.now
        var entry = entries[item] ?? Entry()
        if let live = entry.lease, now < live.expiresAt {
            return .held(owner: live.owner, until: live.expiresAt)
        }
        if entry.unresolved { entry.lost += 1 }
        lastGeneration += 1
        let lease = RefreshLease(item: item, owner: owner, generation: lastGeneration, expiresAt: now.addingTimeInterval(duration))
        let lost = entry.lost
        entry.lease = lease
        entry.unresolved = false
        entries[item] = entry
        return .granted(lease, answersLost: lost)
    }

    public func recordRequest(under lease: RefreshLease) async throws -> Bool {
        try await turns.withLock(lease.item) {
            guard isLatest(lease) else { return false }
            entries[lease.item]?.unresolved = true
            return true
        }
    }

    public func store(_ secret: SecureBytes, for item: ItemKey, options: StoreOptions, holding lease: RefreshLease) async throws -> Bool {
        guard item == lease.item else { throw VaultError.invalidArgument("the lease is for another item") }
        return try await turns.withLock(item) {
            guard isLatest(lease) else { return false }
            try await inner.store(secret, for: item, options: options)
            endLease(item)
            setDue(item, options)
            return true
        }
    }

    public func release(_ lease: RefreshLease, answerLost: Bool) async throws {
        try await turns.withLock(lease.item) { give(back: lease, answerLost: answerLost) }
    }

    private func give(back lease: RefreshLease, answerLost: Bool) {
        guard isLatest(lease), var entry = entries[lease.item] else { return }
        entry.lease = nil
        entry.unresolved = false
        entry.lost = answerLost ? entry.lost + 1 : 0
        entries[lease.item] = entry
        notify(lease.item)
    }

    public func changes(of item: ItemKey) async -> AsyncStream<Void>? {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = nextWatcher
        nextWatcher &+= 1
        watchers[item, default: [:]][id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unwatch(item, id) }
        }
        return stream
    }

    public func loginsInDoubt() async throws -> Int {
        let now = clock.now
        return entries.values.filter { entry in
            entry.lost > 0 || (entry.unresolved && entry.lease.map { $0.expiresAt <= now } ?? false)
        }.count
    }

    // MARK: DueRefreshes

    public func claimDueRefreshes(limit: Int, owner: String, duration: TimeInterval) async throws -> [DueRefresh] {
        guard limit > 0, duration > 0 else { throw VaultError.invalidArgument("a claim of due refreshes needs a limit and a duration above 0") }
        let now = clock.now
        let candidates = dues.filter { $0.value.at <= now }
            .sorted { ($0.value.at, $0.key.service, $0.key.account) < ($1.value.at, $1.key.service, $1.key.account) }
            .map(\.key)
        var claimed: [DueRefresh] = []
        for item in candidates where claimed.count < limit {
            // In the item's turn, as a claim of one login is: a write under way finishes first, and
            // the due time and lease are looked at afresh.
            let claim: DueRefresh? = try await turns.withLock(item) {
                let now = clock.now
                guard let due = dues[item], due.at <= now else { return nil }
                if let end = due.itemExpiresAt, end <= now {
                    dues[item] = nil
                    return nil
                }
                guard case .granted(let lease, let lost) = grant(item, owner: owner, duration: duration) else { return nil }
                return DueRefresh(lease: lease, answersLost: lost)
            }
            if let claim { claimed.append(claim) }
        }
        return claimed
    }

    public func postponeRefresh(_ lease: RefreshLease, until date: Date) async throws {
        try await turns.withLock(lease.item) {
            if isLatest(lease), let due = dues[lease.item], due.at < date { dues[lease.item]?.at = date }
        }
    }

    public func earliestRefreshDue() async throws -> Date? {
        let now = clock.now
        return dues.filter { item, due in
            let alive = due.itemExpiresAt.map { $0 > now } ?? true
            let leaseFree = entries[item]?.lease.map { $0.expiresAt <= now } ?? true
            return alive && leaseFree
        }.map(\.value.at).min()
    }

    public func restoreRefreshDue(_ date: Date?, of item: ItemKey, itemExpiresAt: Date?) async throws {
        dues[item] = date.map { ($0, itemExpiresAt) }
    }

    public nonisolated var dueRefreshesAreShared: Bool { false }

    // MARK: TokenStore

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try await turns.withLock(key) {
            try await inner.store(secret, for: key, options: options)
            endLease(key)
            setDue(key, options)
        }
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        try await inner.retrieve(key)
    }

    public func delete(_ key: ItemKey) async throws {
        try await turns.withLock(key) {
            // Ended first: a holder must not write back what a logout is deleting, even if the delete fails.
            endLease(key)
            do {
                try await inner.delete(key)
            } catch let error as VaultError where error.code == .notFound {
                dues[key] = nil
                throw error
            }
            dues[key] = nil
        }
    }

    public func list(service: String?) async throws -> [ItemMetadata] {
        try await inner.list(service: service)
    }

    // MARK: State

    private func isLatest(_ lease: RefreshLease) -> Bool {
        entries[lease.item]?.lease?.generation == lease.generation
    }

    private func setDue(_ item: ItemKey, _ options: StoreOptions) {
        dues[item] = options.refreshDueAt.map { ($0, options.expiresAt) }
    }

    private func endLease(_ item: ItemKey) {
        entries[item] = nil
        notify(item)
    }

    private func notify(_ item: ItemKey) {
        for continuation in (watchers[item] ?? [:]).values { continuation.yield() }
    }

    private func unwatch(_ item: ItemKey, _ id: UInt64) {
        watchers[item]?[id] = nil
        if watchers[item]?.isEmpty == true { watchers[item] = nil }
    }
}
