import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
import VaultCore
import VaultCrypto

/// A ``TokenStore`` that keeps items in the user's desktop keyring (Secret Service), in its default
/// collection, under the schema `org.sortedvault.Item` with attributes `service` and `account`:
///
/// ```swift
/// let store = SecretServiceTokenStore(threadPool: pool)
/// try await store.store(SecureBytes(copying: token), service: "com.sorted.api", account: "ada")
/// // $ secret-tool lookup service com.sorted.api account ada   → the token
/// ```
///
/// - Secrets travel over an encrypted Secret Service session and are copied into `SecureBytes`;
///   libsecret's own buffers are wiped when released.
/// - The keyring's lock is the store's lock: a locked collection fails every operation with
///   `.locked`, never `.notFound`, and never pops up a prompt.
/// - Do not use it where names must stay secret: the keyring keeps attributes (service, account,
///   label, your attributes) in clear — gnome-keyring does — unlike the embedded store, which seals them.
/// - Every libsecret call runs on `threadPool`, one at a time (``SecretServiceCalls``): a slow or
///   hung keyring holds up only the callers of the keyring, never the cooperative threads.
public struct SecretServiceTokenStore: TokenStore {
    private let threadPool: NIOThreadPool
    private let clock: any VaultClock

    public init(threadPool: NIOThreadPool, clock: any VaultClock = SystemClock()) {
        self.threadPool = threadPool
        self.clock = clock
    }

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try validateSecret(secret)
        let now = clock.now
        try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            let collection = try session.defaultCollection()
            if try session.isLocked(collection) { throw SecretServiceErrors.locked(collection) }
            let existing = try session.search(Schemas.itemLookup, key.attributes)
            if !existing.locked.isEmpty { throw SecretServiceErrors.locked(collection) }
            // A replacement keeps the creation date of the live item it replaces.
            let previous = try existing.unlocked.map { try StoredMetadata.metadata(of: session.details(of: $0), key: key) }
                .filter { !$0.isExpired(at: now) }
                .max { $0.modifiedAt < $1.modifiedAt }
            let metadata = ItemMetadata(key: key, label: options.label, attributes: options.attributes,
                                        createdAt: previous?.createdAt ?? now, modifiedAt: now, expiresAt: options.expiresAt)
            var attributes = key.attributes
            attributes[ItemAttributes.metadata] = try StoredMetadata(metadata).encoded()
            let path = try session.create(in: collection, schema: Schemas.item, attributes: attributes,
                                          label: options.label ?? "\(key.service) (\(key.account))",
                                          secret: secret, contentType: "text/plain")
            for old in existing.unlocked where old != path { try session.delete(old) }
        }
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        let now = clock.now
        return try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            let found = try session.liveItems(for: key, now: now)
            guard let newest = found.max(by: { $0.metadata.modifiedAt < $1.metadata.modifiedAt }) else { throw VaultError.notFound(key) }
            guard let secret = try session.secrets(of: [newest.path])[newest.path] else {
                // It was found unlocked a moment ago: it was locked or deleted in between.
                let collection = try session.defaultCollection()
                if try session.isLocked(collection) { throw SecretServiceErrors.locked(collection) }
                throw VaultError.notFound(key)
            }
            return RetrievedItem(metadata: newest.metadata, secret: secret)
        }
    }

    public func delete(_ key: ItemKey) async throws {
        let now = clock.now
        try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            let found = try session.liveItems(for: key, now: now)
            guard !found.isEmpty else { throw VaultError.notFound(key) }
            for item in found { try session.delete(item.path) }
        }
    }

    public func list(service: String?) async throws -> [ItemMetadata] {
        let now = clock.now
        return try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            let collection = try session.defaultCollection()
            if try session.isLocked(collection) { throw SecretServiceErrors.locked(collection) }
            let found = try session.search(Schemas.item, service.map { [ItemAttributes.service: $0] } ?? [:])
            if !found.locked.isEmpty { throw SecretServiceErrors.locked(collection) }
            var newest: [ItemKey: ItemMetadata] = [:]
            for path in found.unlocked {
                let details = try session.details(of: path)
                guard let service = details.attributes[ItemAttributes.service], let account = details.attributes[ItemAttributes.account],
                      let key = try? ItemKey(service: service, account: account) else { continue }
                let metadata = StoredMetadata.metadata(of: details, key: key)
                if metadata.isExpired(at: now) {
                    try session.delete(path)  // purge
                    continue
                }
                if let seen = newest[key], seen.modifiedAt >= metadata.modifiedAt { continue }
                newest[key] = metadata
            }
            return Array(newest.values).sortedForListing()
        }
    }
}

extension Session {
    struct Found {
        let path: String
        let metadata: ItemMetadata
    }

    /// The unexpired items stored under `key`; expired ones are deleted. Throws `.locked` when any
    /// match is locked, or when nothing matched and the default collection is locked (a locked
    /// collection is never reported as "not found").
    func liveItems(for key: ItemKey, now: Date) throws -> [Found] {
        let matches = try search(Schemas.itemLookup, key.attributes)
        if !matches.locked.isEmpty { throw SecretServiceErrors.locked(try defaultCollection()) }
        if matches.unlocked.isEmpty {
            let collection = try defaultCollection()
            if try isLocked(collection) { throw SecretServiceErrors.locked(collection) }
            return []
        }
        var live: [Found] = []
        for path in matches.unlocked {
            let metadata = StoredMetadata.metadata(of: try details(of: path), key: key)
            if metadata.isExpired(at: now) {
                try delete(path)
            } else {
                live.append(Found(path: path, metadata: metadata))
            }
        }
        return live
    }
}

extension ItemKey {
    /// The item's Secret Service attributes, as `secret-tool` would write them.
    var attributes: [String: String] { [ItemAttributes.service: service, ItemAttributes.account: account] }
}
