import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// ``RevocationOutbox`` over any ``TokenStore`` that one process owns (the embedded vault, the
/// in-memory store): each entry is an item of the reserved service ``service`` (its payload the
/// item's secret, expiring at `discardAfter`), and the delivery state — attempts, next attempt,
/// claims — lives in this instance, as the process owning the store is the only one delivering.
///
/// ```swift
/// let outbox = LocalRevocationOutbox(wrapping: leases, clock: clock)
/// ```
///
/// The store cannot write an entry and delete the login in one step: the entry is written first,
/// then the login deleted, so a crash between leaves both; ``revocationsToReconcile()`` reads the
/// entries back at start-up (and from then on delivers them). Attempts start again from 0 after a
/// restart.
public actor LocalRevocationOutbox: RevocationOutbox {
    /// Where the entries live in the wrapped store: reserved, so the item API never reaches them.
    public static let service = ItemKey.reservedServicePrefix + "revocation"

    private struct State {
        var attempts = 0
        var due: Date
        var queuedAt: Date
        var claim: UInt64 = 0
        var lastError: String?
    }

    private let inner: any TokenStore
    private let clock: any VaultClock
    private var entries: [String: State] = [:]
    private var lastClaim: UInt64 = 0

    public init(wrapping store: any TokenStore, clock: any VaultClock) {
        inner = store
        self.clock = clock
    }

    public nonisolated var outboxIsShared: Bool { false }

    // MARK: RevocationOutbox

    public func enqueueRevocation(_ payload: SecureBytes, for item: ItemKey, wiping: Bool, holdFor: TimeInterval,
                                  discardAfter: Date) async throws -> OutboxEntry {
        let id = SecureBytes(randomCount: 16).withUnsafeBytes { Hex.text($0) }
        let now = clock.now
        try await inner.store(payload, for: try ItemKey(service: Self.service, account: id),
                              options: try StoreOptions(label: "sortedvault queued revocation", expiresAt: discardAfter))
        lastClaim += 1
        entries[id] = State(due: now.addingTimeInterval(holdFor), queuedAt: now, claim: lastClaim)
        if wiping {
            do { try await inner.delete(item) } catch let error as VaultError where error.code == .notFound {}
        }
        return OutboxEntry(id: id, payload: payload, attempts: 0, claim: lastClaim)
    }

    public func claimDueRevocations(limit: Int, for duration: TimeInterval) async throws -> [OutboxEntry] {
        guard limit > 0, duration > 0 else { throw VaultError.invalidArgument("a claim needs a limit and a duration above 0") }
        let now = clock.now
        let due = entries.filter { $0.value.due <= now }.sorted { ($0.value.due, $0.key) < ($1.value.due, $1.key) }.prefix(limit)
        var claimed: [(id: String, attempts: Int, claim: UInt64)] = []
        // Claimed before the first await, so a claim interleaving with this one finds them taken.
        for (id, _) in due {
            lastClaim += 1
            entries[id]?.due = now.addingTimeInterval(duration)
            entries[id]?.claim = lastClaim
            claimed.append((id, entries[id]?.attempts ?? 0, lastClaim))
        }
        var opened: [OutboxEntry] = []
        for entry in claimed {
            do {
                let payload = try await inner.retrieve(try ItemKey(service: Self.service, account: entry.id)).secret
                opened.append(OutboxEntry(id: entry.id, payload: payload, attempts: entry.attempts, claim: entry.claim))
            } catch let error as VaultError where error.code == .notFound {
                entries[entry.id] = nil  // past its discardAfter: its tokens no longer work
            }
        }
        return opened
    }

    public func revocationDelivered(_ entry: OutboxEntry) async throws {
        entries[entry.id] = nil
        do {
            try await inner.delete(try ItemKey(service: Self.service, account: entry.id))
        } catch let error as VaultError where error.code == .notFound {}
    }

    public func revocationFailed(_ entry: OutboxEntry, retryIn: TimeInterval, code: String) async throws {
        guard var state = entries[entry.id], state.claim == entry.claim else { return }
        state.attempts += 1
        state.due = clock.now.addingTimeInterval(max(0, retryIn))
        state.lastError = String(code.prefix(64))
        entries[entry.id] = state
    }

    public func revocationBacklog(stuckAfter: Int) async throws -> RevocationBacklog {
        let now = clock.now
        let oldest = entries.values.map(\.queuedAt).min()
        return RevocationBacklog(pending: entries.count, stuck: entries.values.filter { $0.attempts >= stuckAfter }.count,
                                 oldestAge: oldest.map { max(0, now.timeIntervalSince($0)) })
    }

    public func revocationsToReconcile() async throws -> [OutboxEntry] {
        let now = clock.now
        var found: [OutboxEntry] = []
        for item in try await inner.list(service: Self.service) where item.service.utf8.elementsEqual(Self.service.utf8) {
            let payload: SecureBytes
            do { payload = try await inner.retrieve(item.key).secret } catch let error as VaultError where error.code == .notFound { continue }
            if entries[item.account] == nil {
                entries[item.account] = State(due: now, queuedAt: item.createdAt)
            }
            let state = entries[item.account]!
            found.append(OutboxEntry(id: item.account, payload: payload, attempts: state.attempts, claim: state.claim))
        }
        return found
    }

    // MARK: TokenStore

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try await inner.store(secret, for: key, options: options)
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        try await inner.retrieve(key)
    }

    public func delete(_ key: ItemKey) async throws {
        try await inner.delete(key)
    }

    public func list(service: String?) async throws -> [ItemMetadata] {
        try await inner.list(service: service)
    }
}
