import VaultCrypto

/// The one seam every backend and every client goes through: the in-memory store, the encrypted
/// SQLite vault, the Secret Service store and the socket client all conform, and all pass the same
/// conformance suite (`VaultTesting.TokenStoreConformance`).
///
/// ```swift
/// try await store.store(SecureBytes(copying: token), service: "com.sorted.api", account: "ada")
/// let item = try await store.retrieve(service: "com.sorted.api", account: "ada")
/// ```
///
/// Semantics every conformer keeps:
/// - `store` inserts or replaces; a replacement keeps `createdAt` and updates `modifiedAt`.
/// - `retrieve` and `delete` of a missing or expired item throw `VaultError.Code.notFound`.
/// - `list` returns metadata only, never secrets, sorted by service then account.
/// - An expired item is never returned, and is purged.
/// - A locked store fails every item operation with `.locked`, never `.notFound`.
public protocol TokenStore: Sendable {
    /// Inserts or replaces the item at `key`.
    func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws
    /// The item at `key`, with its secret.
    func retrieve(_ key: ItemKey) async throws -> RetrievedItem
    /// Removes the item at `key`, leaving no recoverable trace where the backend can promise that.
    func delete(_ key: ItemKey) async throws
    /// Metadata of all live items, or of one service's items when `service` is given.
    func list(service: String?) async throws -> [ItemMetadata]
}

extension TokenStore {
    public func store(_ secret: SecureBytes, service: String, account: String, options: StoreOptions = .none) async throws {
        try await store(secret, for: ItemKey(service: service, account: account), options: options)
    }

    public func retrieve(service: String, account: String) async throws -> RetrievedItem {
        try await retrieve(ItemKey(service: service, account: account))
    }

    public func delete(service: String, account: String) async throws {
        try await delete(ItemKey(service: service, account: account))
    }

    public func list() async throws -> [ItemMetadata] {
        try await list(service: nil)
    }
}

/// An optional ability: stores that can be locked and unlocked (the encrypted vault; a keyring).
public protocol LockableStore: Sendable {
    var isLocked: Bool { get async }
    /// Forgets the key material; every item operation then fails with `.locked` until unlocked.
    func lock() async
}

extension Array where Element == ItemMetadata {
    /// Orders metadata the way `list` promises: by service, then account.
    public func sortedForListing() -> [ItemMetadata] {
        sorted { ($0.service, $0.account) < ($1.service, $1.account) }
    }
}

/// An optional ability of a ``TokenStore``: ``retrieveNow(_:)`` answers on the caller's thread in
/// microseconds, without waiting, when it can (the embedded vault's immediate read).
public protocol TokenStoreReadingNow: TokenStore {
    /// The item, or nil when only ``TokenStore/retrieve(_:)`` can answer (then call it). Throws as
    /// `retrieve` does. Never waits on a lock held across I/O, never writes.
    func retrieveNow(_ key: ItemKey) throws -> RetrievedItem?
}

/// An optional ability of a ``TokenStore``: every live record, secrets included, as of one moment —
/// one read of one database snapshot, so that a backup never holds half of a change. It includes
/// sortedvault's own records (``ItemKey/isReserved``): logins and queued revocations.
public protocol TokenStoreSnapshots: TokenStore {
    /// Every live item with its secret, in listing order.
    func snapshot() async throws -> [RetrievedItem]
}
