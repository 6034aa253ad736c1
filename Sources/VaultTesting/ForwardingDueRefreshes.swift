import FoundationEssentials
import VaultCore
import VaultCrypto

/// A lease store that passes every call to ``inner``: a test's store that changes one behaviour
/// (no change hints, an action before a claim) conforms and writes only that one.
///
/// ```swift
/// struct WithoutHints: ForwardingDueRefreshes {
///     let inner: any DueRefreshes
///     func changes(of item: ItemKey) async -> AsyncStream<Void>? { nil }
/// }
/// ```
public protocol ForwardingDueRefreshes: DueRefreshes {
    var inner: any DueRefreshes { get }
}

extension ForwardingDueRefreshes {
    public func claimDueRefreshes(limit: Int, owner: String, duration: TimeInterval) async throws -> [DueRefresh] {
        try await inner.claimDueRefreshes(limit: limit, owner: owner, duration: duration)
    }
    public func postponeRefresh(_ lease: RefreshLease, until date: Date) async throws { try await inner.postponeRefresh(lease, until: date) }
    public func earliestRefreshDue() async throws -> Date? { try await inner.earliestRefreshDue() }
    public func restoreRefreshDue(_ date: Date?, of item: ItemKey, itemExpiresAt: Date?) async throws {
        try await inner.restoreRefreshDue(date, of: item, itemExpiresAt: itemExpiresAt)
    }
    public var dueRefreshesAreShared: Bool { inner.dueRefreshesAreShared }

    public func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim {
        try await inner.claimRefresh(of: item, owner: owner, duration: duration)
    }
    public func store(_ secret: SecureBytes, for item: ItemKey, options: StoreOptions, holding lease: RefreshLease) async throws -> Bool {
        try await inner.store(secret, for: item, options: options, holding: lease)
    }
    public func recordRequest(under lease: RefreshLease) async throws -> Bool { try await inner.recordRequest(under: lease) }
    public func release(_ lease: RefreshLease, answerLost: Bool) async throws { try await inner.release(lease, answerLost: answerLost) }
    public func changes(of item: ItemKey) async -> AsyncStream<Void>? { await inner.changes(of: item) }
    public func loginsInDoubt() async throws -> Int { try await inner.loginsInDoubt() }

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try await inner.store(secret, for: key, options: options)
    }
    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem { try await inner.retrieve(key) }
    public func delete(_ key: ItemKey) async throws { try await inner.delete(key) }
    public func list(service: String?) async throws -> [ItemMetadata] { try await inner.list(service: service) }
}
