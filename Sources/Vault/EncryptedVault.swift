import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
import Synchronization
import VaultCore
import VaultCrypto

/// The embedded vault: a ``TokenStore`` that seals every item before it reaches a ``SealedStorage``.
///
/// ```swift
/// let storage = try SQLiteSealedStorage(path: path)
/// let vault = try await EncryptedVault.create(storage: storage, threadPool: pool, keySource: .passphrase(pass))
/// try await vault.store(secret, service: "com.sorted.api", account: "ada")
/// await vault.lock()   // zeroes the keys; item operations now throw `.locked`
/// ```
///
/// Each record is sealed under a key derived from the master key, its row and its revision, so
/// copied ciphertext fails to open; a vault-wide authenticated state (``SealedVaultState``), written
/// with every change and checked on unlock and every read, plus a ``GenerationRecord`` kept outside
/// the file, refuse rows or whole files put back from an older copy (docs/rollback.md).
/// Passphrase derivation runs off the actor and off the cooperative thread pool, on `threadPool`
/// (the process's one pool for blocking work, which its owner starts and shuts down), so a slow
/// unlock does not hold up other callers; see ``KeyDerivation``.
public actor EncryptedVault: TokenStore, LockableStore, TokenStoreReadingNow {
    let storage: any SealedStorage
    /// Where key derivation runs (``KeyDerivation``).
    let threadPool: NIOThreadPool
    let clock: any VaultClock
    let generationRecord: (any GenerationRecord)?
    /// What the reads use without the actor (``ReadView``): the keys, the verified state and the
    /// newest generation seen, copied here under a lock on every change of the three properties below.
    nonisolated let published = Locked(ReadView())
    /// The header bytes ``keySourceKinds()`` last decoded, and their key source kinds.
    nonisolated let decodedHeaderKinds = Locked<(bytes: [UInt8], kinds: [String])?>(nil)
    private var keys: ItemKeys? { didSet { publish() } }
    /// The vault id and the newest state generation this instance has seen: the state never goes back.
    var seen: (vaultID: [UInt8], generation: UInt64)? { didSet { publish() } }
    /// The state last authenticated (with its map), so a read of an unchanged state skips the hash.
    /// Cleared by `lock()`: a state is only trusted under the keys that checked it.
    var verified: (state: SealedVaultState, map: StateMap, digest: [UInt8])? { didSet { publish() } }
    /// Stores waiting for the group commit in progress (see ``store(_:for:options:)``).
    var pendingStores: [PendingStore] = []
    var groupCommitRunning = false
    /// State changes take turns: the actor is re-entrant across awaits, and two changes built on the
    /// same state would make one of them retry (``StateConflict`` is for other processes).
    private let turns = KeyedLock<Turn>()
    private enum Turn: Hashable { case write }

    func withWriteTurn<T>(_ body: () async throws -> T) async throws -> T {
        try await turns.withLock(.write, body)
    }

    /// Opens an existing vault, locked. Throws `.notInitialized` when there is none, and
    /// `.integrityFailure` when `generationRecord` shows the file is an older copy of the vault.
    public init(storage: any SealedStorage, threadPool: NIOThreadPool, clock: any VaultClock = SystemClock(),
                generationRecord: (any GenerationRecord)? = nil) async throws {
        guard let bytes = try storage.readHeader() else {
            throw VaultError(.notInitialized, "no vault has been created here yet: run `sortedvault init`")
        }
        _ = try VaultHeader.decode(bytes)
        self.storage = storage
        self.threadPool = threadPool
        self.clock = clock
        self.generationRecord = generationRecord
        try Self.checkAgainstRecord(try storage.readState(), generationRecord)
    }

    /// Opens a vault for `sortedvault recover --accept-rollback`: like ``init(storage:threadPool:clock:generationRecord:)``
    /// without refusing an older copy at open. Follow with `unlock(_:acceptingRollback: true)`.
    public static func openForRecovery(storage: any SealedStorage, threadPool: NIOThreadPool, clock: any VaultClock = SystemClock(),
                                       generationRecord: (any GenerationRecord)?) async throws -> EncryptedVault {
        guard let bytes = try storage.readHeader() else {
            throw VaultError(.notInitialized, "no vault has been created here yet: run `sortedvault init`")
        }
        _ = try VaultHeader.decode(bytes)
        return EncryptedVault(storage: storage, threadPool: threadPool, clock: clock, generationRecord: generationRecord, keys: nil)
    }

    private init(storage: any SealedStorage, threadPool: NIOThreadPool, clock: any VaultClock,
                 generationRecord: (any GenerationRecord)?, keys: ItemKeys?) {
        self.storage = storage
        self.threadPool = threadPool
        self.clock = clock
        self.generationRecord = generationRecord
        self.keys = keys
        published.withLock { $0.keys = keys }
    }

    /// Copies what the reads need into ``published`` (property observers do not run in `init`).
    func publish() {
        let view = ReadView(keys: keys, verified: verified.map { ($0.state, $0.map) }, seen: seen)
        published.withLock { $0 = view }
    }

    /// Creates a new vault in empty `storage`, protected by `keySource`, and returns it unlocked.
    public static func create(storage: any SealedStorage, threadPool: NIOThreadPool, keySource: NewKeySource,
                              clock: any VaultClock = SystemClock(),
                              generationRecord: (any GenerationRecord)? = nil) async throws -> EncryptedVault {
        try await create(storage: storage, threadPool: threadPool, keySources: [keySource], clock: clock, generationRecord: generationRecord)
    }

    /// Creates a new vault whose master key any one of `keySources` unlocks — for example the desktop
    /// keyring, and a recovery passphrase for when the keyring is unavailable.
    public static func create(storage: any SealedStorage, threadPool: NIOThreadPool, keySources: [NewKeySource],
                              clock: any VaultClock = SystemClock(),
                              generationRecord: (any GenerationRecord)? = nil) async throws -> EncryptedVault {
        guard !keySources.isEmpty, keySources.count <= 16 else {
            throw VaultError.invalidArgument("a vault needs between 1 and 16 key sources")
        }
        if try storage.readHeader() != nil {
            throw VaultError(.alreadyInitialized, "a vault already exists here; open it instead, or remove it first")
        }
        let master = SecureBytes(randomCount: MasterKey.count)
        let slots = try await KeyDerivation.run(on: threadPool) { try keySources.map { try KeySlots.make(for: $0, wrapping: master) } }
        let header = VaultHeader(format: VaultHeader.currentFormat, slots: slots)
        try await storage.writeHeader(try header.encoded(), expected: nil)
        let vault = EncryptedVault(storage: storage, threadPool: threadPool, clock: clock, generationRecord: generationRecord,
                                   keys: ItemKeys(master: master))
        try await vault.sealState(of: StateMap(), keys: ItemKeys(master: master), after: nil, vaultID: nil)
        return vault
    }

    // MARK: Locking

    /// Unlocks with a passphrase, key file or keyring key. A wrong one throws `.wrongPassphrase` and changes nothing.
    /// Throws `.integrityFailure` (and stays locked) when the vault's state shows a rollback.
    ///
    /// `acceptingRollback` is the recovery path (`sortedvault recover --accept-rollback`): the rows as
    /// they are now become the vault's state, at a generation newer than any seen. Use it only after
    /// restoring an older copy on purpose: whatever was rolled back stays rolled back.
    public func unlock(_ credential: UnlockCredential, acceptingRollback: Bool = false) async throws {
        let header = try currentHeader()
        let master = try await KeyDerivation.run(on: threadPool) { try KeySlots.open(header.decoded, with: credential) }
        let unlocked = ItemKeys(master: master)
        if acceptingRollback {
            try await acceptCurrentRows(keys: unlocked)
        } else {
            try await checkStateAtUnlock(keys: unlocked)
        }
        keys = unlocked
    }

    public func lock() {
        keys = nil
        verified = nil
    }

    /// Re-wraps the master key under a new passphrase. Items are not re-encrypted.
    public func changePassphrase(from old: SecureBytes, to new: SecureBytes, cost: Argon2Cost = .moderate) async throws {
        let header = try currentHeader()
        guard let index = header.decoded.slots.firstIndex(where: { $0.kind == .passphrase }) else {
            throw VaultError.invalidArgument("this vault has no passphrase to change: it opens with its key file or the desktop keyring; nothing was changed")
        }
        let newSlot = try await KeyDerivation.run(on: threadPool) { () throws -> KeySlot in
            let master = try KeySlots.open(header.decoded, with: .passphrase(old))
            return try KeySlots.make(for: .passphrase(new, cost: cost), wrapping: master)
        }
        var updated = header.decoded
        updated.slots[index] = newSlot
        try await storage.writeHeader(try updated.encoded(), expected: header.bytes)
    }

    /// The desktop-keyring item that holds this vault's key, if a secret-service slot protects it.
    public func secretServiceKeyID() async throws -> String? {
        try currentHeader().decoded.slots.first { $0.kind == .secretService }?.keyID
    }

    /// How many items are stored; works while locked (it reveals no names).
    public func itemCount() async throws -> Int {
        try storage.count()
    }

    static let missingHeader = VaultError(.notInitialized, "the vault header is missing; the file was replaced or damaged")

    private func currentHeader() throws -> (bytes: [UInt8], decoded: VaultHeader) {
        guard let bytes = try storage.readHeader() else { throw Self.missingHeader }
        return (bytes, try VaultHeader.decode(bytes))
    }

    func unlockedKeys() throws -> ItemKeys {
        guard let keys else { throw VaultError.locked }
        return keys
    }

    // MARK: TokenStore

    /// Stores arriving while another store commits wait and are committed together, in one transaction
    /// and one fsync (group commit); each returns only once its row is durable, and a failed commit
    /// fails every store of its group. See ``EncryptedVault/commitGroups(keys:)``.
    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        let keys = try unlockedKeys()
        try validateSecret(secret)
        let request = PendingStore(key: key, lookup: keys.lookup(for: key), secret: secret, options: options)
        if groupCommitRunning {
            let leads = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                request.continuation = continuation
                pendingStores.append(request)
            }
            guard leads else { return }  // committed in another caller's group
        } else {
            groupCommitRunning = true
            pendingStores.append(request)
        }
        try await commitGroups(keys: keys, leader: request)
    }

    /// Builds one store's record against the state map `map` (with `existing`, the row now stored).
    func sealRecord(for request: PendingStore, existing: SealedRecord?, map: StateMap, keys: ItemKeys, at now: Date) throws -> SealedRecord {
        // A replacement keeps the creation date, unless the old record no longer opens, is not the
        // one the state names, or expired.
        var createdAt = now
        if let existing, let entry = map[request.lookup], entry.revision == existing.revision,
           let old = try? open(metadataOf: existing, keys: keys), !old.isExpired(at: now) {
            createdAt = old.createdAt
        }
        // Never reuse a revision: above both the state's and the row's.
        let revision = max(map[request.lookup]?.revision ?? 0, existing?.revision ?? 0) &+ 1
        let options = request.options
        let metadata = ItemMetadata(key: request.key, label: options.label, attributes: options.attributes,
                                    createdAt: createdAt, modifiedAt: now, expiresAt: options.expiresAt)
        return SealedRecord(
            lookup: request.lookup, revision: revision, expiresAt: options.expiresAt,
            sealedMetadata: try RecordFormat.seal(try SealedMetadata(metadata).encoded(), keys: keys, lookup: request.lookup, revision: revision, part: .metadata),
            sealedSecret: try RecordFormat.seal(request.secret, keys: keys, lookup: request.lookup, revision: revision, part: .secret))
    }

    public func delete(_ key: ItemKey) async throws {
        let keys = try unlockedKeys()
        let lookup = keys.lookup(for: key)
        // A damaged or rolled-back row can be deleted by name, so the vault can be repaired item by item.
        let (entry, record) = try await readConsistently(keys: keys) { map in (map[lookup], try self.storage.read(lookup: lookup).record) }
        guard record != nil || entry != nil else { throw VaultError.notFound(key) }
        let expired = (entry?.isExpired(at: clock.now) ?? false) || (record?.expiresAt.map { clock.now >= $0 } ?? false)
        try await remove(lookup, keys: keys)
        guard !expired else { throw VaultError.notFound(key) }
    }

    /// Deletes and scrubs every expired item; returns how many. Works while locked: expiry is kept
    /// in clear (and checked against the sealed copy on every read).
    @discardableResult
    public func purgeExpired() async throws -> Int {
        try await storage.deleteExpired(asOf: clock.now)
    }

    nonisolated func open(metadataOf record: SealedRecord, keys: ItemKeys) throws -> ItemMetadata {
        let plaintext = try RecordFormat.open(record.sealedMetadata, keys: keys, lookup: record.lookup, revision: record.revision, part: .metadata)
        let metadata = try SealedMetadata.decode(plaintext)
        guard keys.lookup(for: metadata.key) == record.lookup, metadata.expiresAt == record.expiresAt else {
            throw VaultError.integrityFailure("an item's clear fields disagree with its sealed ones; the store was tampered with")
        }
        return metadata
    }
}
