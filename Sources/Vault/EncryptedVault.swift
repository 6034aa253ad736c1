import Foundation
import VaultCore
import VaultCrypto

/// The embedded vault: a ``TokenStore`` that seals every item before it reaches a ``SealedStorage``.
///
/// ```swift
/// let storage = try SQLiteSealedStorage(path: path)
/// let vault = try await EncryptedVault.create(storage: storage, keySource: .passphrase(pass))
/// try await vault.store(secret, service: "com.sorted.api", account: "ada")
/// await vault.lock()   // zeroes the keys; item operations now throw `.locked`
/// ```
///
/// Each record is sealed under a key derived from the master key, its row and its revision, so
/// copied or rolled-back ciphertext fails to open. Passphrase derivation runs off the actor and off
/// the cooperative thread pool, so a slow unlock does not hold up other callers.
public actor EncryptedVault: TokenStore, LockableStore {
    private let storage: any SealedStorage
    private let clock: any VaultClock
    private var keys: ItemKeys?

    /// Opens an existing vault, locked. Throws `.notInitialized` when there is none.
    public init(storage: any SealedStorage, clock: any VaultClock = SystemClock()) async throws {
        guard let bytes = try await storage.readHeader() else {
            throw VaultError(.notInitialized, "no vault has been created here yet: run `sortedvault init`")
        }
        _ = try VaultHeader.decode(bytes)
        self.storage = storage
        self.clock = clock
    }

    private init(storage: any SealedStorage, clock: any VaultClock, keys: ItemKeys) {
        self.storage = storage
        self.clock = clock
        self.keys = keys
    }

    /// Creates a new vault in empty `storage`, protected by `keySource`, and returns it unlocked.
    public static func create(storage: any SealedStorage, keySource: NewKeySource, clock: any VaultClock = SystemClock()) async throws -> EncryptedVault {
        try await create(storage: storage, keySources: [keySource], clock: clock)
    }

    /// Creates a new vault whose master key any one of `keySources` unlocks — for example the desktop
    /// keyring, and a recovery passphrase for when the keyring is unavailable.
    public static func create(storage: any SealedStorage, keySources: [NewKeySource], clock: any VaultClock = SystemClock()) async throws -> EncryptedVault {
        guard !keySources.isEmpty, keySources.count <= 16 else {
            throw VaultError.invalidArgument("a vault needs between 1 and 16 key sources")
        }
        if try await storage.readHeader() != nil {
            throw VaultError(.alreadyInitialized, "a vault already exists here; open it instead, or remove it first")
        }
        let master = SecureBytes(randomCount: MasterKey.count)
        let slots = try await KeyDerivationQueue.run { try keySources.map { try KeySlots.make(for: $0, wrapping: master) } }
        let header = VaultHeader(format: VaultHeader.currentFormat, slots: slots)
        try await storage.writeHeader(try header.encoded(), expected: nil)
        return EncryptedVault(storage: storage, clock: clock, keys: ItemKeys(master: master))
    }

    // MARK: Locking

    public var isLocked: Bool { keys == nil }

    /// Unlocks with a passphrase, key file or keyring key. A wrong one throws `.wrongPassphrase` and changes nothing.
    public func unlock(_ credential: UnlockCredential) async throws {
        let header = try await currentHeader()
        let master = try await KeyDerivationQueue.run { try KeySlots.open(header.decoded, with: credential) }
        keys = ItemKeys(master: master)
    }

    public func lock() {
        keys = nil
    }

    /// Re-wraps the master key under a new passphrase. Items are not re-encrypted.
    public func changePassphrase(from old: SecureBytes, to new: SecureBytes, cost: Argon2Cost = .moderate) async throws {
        let header = try await currentHeader()
        guard let index = header.decoded.slots.firstIndex(where: { $0.kind == .passphrase }) else {
            throw VaultError(.keySourceRejected, "this vault has no passphrase to change")
        }
        let newSlot = try await KeyDerivationQueue.run { () throws -> KeySlot in
            let master = try KeySlots.open(header.decoded, with: .passphrase(old))
            return try KeySlots.make(for: .passphrase(new, cost: cost), wrapping: master)
        }
        var updated = header.decoded
        updated.slots[index] = newSlot
        try await storage.writeHeader(try updated.encoded(), expected: header.bytes)
    }

    /// The kinds of key that can unlock this vault: `passphrase`, `keyfile`, `secret-service`.
    public func keySourceKinds() async throws -> [String] {
        try await currentHeader().decoded.slots.map(\.kind.rawValue)
    }

    /// The desktop-keyring item that holds this vault's key, if a secret-service slot protects it.
    public func secretServiceKeyID() async throws -> String? {
        try await currentHeader().decoded.slots.first { $0.kind == .secretService }?.keyID
    }

    /// How many items are stored; works while locked (it reveals no names).
    public func itemCount() async throws -> Int {
        try await storage.count()
    }

    private func currentHeader() async throws -> (bytes: [UInt8], decoded: VaultHeader) {
        guard let bytes = try await storage.readHeader() else {
            throw VaultError(.notInitialized, "the vault header is missing; the file was replaced or damaged")
        }
        return (bytes, try VaultHeader.decode(bytes))
    }

    private func unlockedKeys() throws -> ItemKeys {
        guard let keys else { throw VaultError.locked }
        return keys
    }

    // MARK: TokenStore

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        let keys = try unlockedKeys()
        try validateSecret(secret)
        let now = clock.now
        let lookup = keys.lookup(for: key)
        let existing = try await storage.record(for: lookup)
        // A replacement keeps the creation date, unless the old record no longer opens or expired.
        var createdAt = now
        if let existing, let old = try? open(metadataOf: existing, keys: keys), !old.isExpired(at: now) {
            createdAt = old.createdAt
        }
        let revision = (existing?.revision ?? 0) &+ 1
        let metadata = ItemMetadata(key: key, label: options.label, attributes: options.attributes,
                                    createdAt: createdAt, modifiedAt: now, expiresAt: options.expiresAt)
        let record = SealedRecord(
            lookup: lookup, revision: revision, expiresAt: options.expiresAt,
            sealedMetadata: try RecordFormat.seal(try SealedMetadata(metadata).encoded(), keys: keys, lookup: lookup, revision: revision, part: .metadata),
            sealedSecret: try RecordFormat.seal(secret, keys: keys, lookup: lookup, revision: revision, part: .secret))
        try await storage.put(record)
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        let keys = try unlockedKeys()
        let now = clock.now
        let lookup = keys.lookup(for: key)
        guard let record = try await storage.record(for: lookup) else { throw VaultError.notFound(key) }
        if let expiresAt = record.expiresAt, now >= expiresAt {
            _ = try await storage.delete(lookup: lookup)
            throw VaultError.notFound(key)
        }
        let metadata = try open(metadataOf: record, keys: keys)
        guard metadata.key == key else {
            throw VaultError.integrityFailure("an item's record belongs to another item; the store was tampered with")
        }
        let secret = try RecordFormat.open(record.sealedSecret, keys: keys, lookup: lookup, revision: record.revision, part: .secret)
        return RetrievedItem(metadata: metadata, secret: secret)
    }

    public func delete(_ key: ItemKey) async throws {
        let keys = try unlockedKeys()
        let lookup = keys.lookup(for: key)
        guard let record = try await storage.record(for: lookup) else { throw VaultError.notFound(key) }
        let expired = record.expiresAt.map { clock.now >= $0 } ?? false
        guard try await storage.delete(lookup: lookup), !expired else { throw VaultError.notFound(key) }
    }

    public func list(service: String?) async throws -> [ItemMetadata] {
        let keys = try unlockedKeys()
        _ = try await purgeExpired()
        let now = clock.now
        var result: [ItemMetadata] = []
        var damaged = 0
        for record in try await storage.listings() {
            guard let metadata = try? open(metadataOf: record, keys: keys) else {
                damaged += 1
                continue
            }
            if metadata.isExpired(at: now) { continue }
            if let service, metadata.service != service { continue }
            result.append(metadata)
        }
        if damaged > 0 {
            throw VaultError.integrityFailure(
                "\(damaged) stored item(s) failed their integrity check; they were damaged or tampered with. Items you can name still open with retrieve; delete the damaged ones and store them again")
        }
        return result.sortedForListing()
    }

    /// Deletes and scrubs every expired item; returns how many. Works while locked: expiry is kept
    /// in clear (and checked against the sealed copy on every read).
    @discardableResult
    public func purgeExpired() async throws -> Int {
        try await storage.deleteExpired(asOf: clock.now)
    }

    private func open(metadataOf record: SealedRecord, keys: ItemKeys) throws -> ItemMetadata {
        let plaintext = try RecordFormat.open(record.sealedMetadata, keys: keys, lookup: record.lookup, revision: record.revision, part: .metadata)
        let metadata = try SealedMetadata.decode(plaintext)
        guard keys.lookup(for: metadata.key) == record.lookup, metadata.expiresAt == record.expiresAt else {
            throw VaultError.integrityFailure("an item's clear fields disagree with its sealed ones; the store was tampered with")
        }
        return metadata
    }
}
