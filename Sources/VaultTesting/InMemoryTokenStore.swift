import FoundationEssentials
import VaultCore
import VaultCrypto

/// A `TokenStore` in process memory, for unit tests of code that uses a store. It keeps the same
/// contract as every backend (it passes the conformance suite) but persists nothing and encrypts
/// nothing: never use it outside tests.
public actor InMemoryTokenStore: TokenStore, LockableStore {
    private struct Entry {
        var metadata: ItemMetadata
        var secret: SecureBytes
    }

    private let clock: any VaultClock
    private var entries: [ItemKey: Entry] = [:]
    private var locked = false

    public init(clock: any VaultClock = SystemClock()) {
        self.clock = clock
    }

    public var isLocked: Bool { locked }
    public func lock() { locked = true }
    public func unlock() { locked = false }

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try checkUnlocked()
        try validateSecret(secret)
        let now = clock.now
        purgeExpired(now)
        let createdAt = entries[key]?.metadata.createdAt ?? now
        entries[key] = Entry(
            metadata: ItemMetadata(key: key, label: options.label, attributes: options.attributes,
                                   createdAt: createdAt, modifiedAt: now, expiresAt: options.expiresAt),
            secret: secret.copy())
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        try checkUnlocked()
        purgeExpired(clock.now)
        guard let entry = entries[key] else { throw VaultError.notFound(key) }
        return RetrievedItem(metadata: entry.metadata, secret: entry.secret.copy())
    }

    public func delete(_ key: ItemKey) async throws {
        try checkUnlocked()
        purgeExpired(clock.now)
        guard entries.removeValue(forKey: key) != nil else { throw VaultError.notFound(key) }
    }

    public func list(service: String?) async throws -> [ItemMetadata] {
        try checkUnlocked()
        purgeExpired(clock.now)
        return entries.values.map(\.metadata)
            .filter { service == nil || $0.service.utf8.elementsEqual(service!.utf8) }
            .sortedForListing()
    }

    private func checkUnlocked() throws {
        if locked { throw VaultError.locked }
    }

    private func purgeExpired(_ now: Date) {
        entries = entries.filter { !$0.value.metadata.isExpired(at: now) }
    }
}
