import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// What a storage backend keeps: opaque, already-sealed bytes. Like Vault's physical backend, a
/// storage is only ever reached through ``EncryptedVault``, which encrypts above it; a storage
/// never sees a key, a secret or an item name.
///
/// Reads are synchronous and run on the caller's thread, so the vault answers a read without a hop
/// (an event loop may call them): they read committed data only, each call in one snapshot, on a
/// connection no writer holds, and never wait behind a write's fsync (SQLite: write-ahead logging).
/// Writes are async: they fsync.
public protocol SealedStorage: Sendable {
    /// The vault header (key slots and format), or nil when the vault has not been initialised.
    func readHeader() throws -> [UInt8]?
    /// Writes the header atomically. With `expected == nil` it creates one and throws
    /// `.alreadyInitialized` if one exists; otherwise it replaces the header only if the stored one
    /// still equals `expected` (compare-and-swap), so a concurrent change is never lost.
    func writeHeader(_ header: [UInt8], expected: [UInt8]?) async throws
    /// The vault state (see ``SealedVaultState``; nil before one was first sealed) and the record
    /// stored under `lookup`, from one snapshot.
    func read(lookup: [UInt8]) throws -> (state: SealedVaultState?, record: SealedRecord?)
    /// The vault state, or nil before one was first sealed. One small row.
    func readState() throws -> SealedVaultState?
    /// Every entry the state names, in any order.
    func stateEntries() throws -> [StateEntry]
    /// The vault state and every record without its sealed secret, in storage order, from one snapshot.
    func listings() throws -> (state: SealedVaultState?, records: [SealedRecord])
    /// The vault state and every record with its sealed secret, in storage order, from one snapshot
    /// (a backup's read).
    func snapshot() throws -> (state: SealedVaultState?, records: [SealedRecord])
    /// How many records are stored (expired ones included until purged).
    func count() throws -> Int
    /// Replaces the state and all its entries, durably, if the stored generation is still `expected`
    /// (nil: no state yet); otherwise throws ``StateConflict`` and changes nothing.
    func writeState(_ state: SealedVaultState, entries: [StateEntry], expected: UInt64?) async throws
    /// Inserts or replaces every record (their lookups are distinct) under its `lookup`, sets their
    /// entries (lookup, revision, expiry) and replaces the state once, durably, in one transaction,
    /// under the same `expected` check as ``writeState(_:entries:expected:)``: all of them are
    /// written, or none. Replaced ciphertext must not stay recoverable from the files.
    func put(_ records: [SealedRecord], state: SealedVaultState, expected: UInt64?) async throws
    /// Deletes the record under `lookup` (scrubbing its ciphertext) and its entry, and replaces the
    /// state, in one transaction, under the same `expected` check; returns whether a record existed.
    func delete(lookup: [UInt8], state: SealedVaultState, expected: UInt64?) async throws -> Bool
    /// Deletes and scrubs every record whose clear expiry is at or before `date`; returns how many.
    /// Leaves the state alone (it may run while the vault is locked): the state keeps the authenticated
    /// expiry of those rows, which tells the vault that their absence is a purge.
    func deleteExpired(asOf date: Date) async throws -> Int
}

/// One item as a storage keeps it. Only `lookup`, `revision` and `expiresAt` are in clear, and none
/// of them reveals a name: `lookup` is a keyed hash.
public struct SealedRecord: Sendable, Equatable {
    /// Keyed BLAKE2b of (service, account): finds the row without revealing the names.
    public var lookup: [UInt8]
    /// Incremented on every write of this row and bound into the record keys, so older
    /// ciphertext of the row does not open.
    public var revision: UInt64
    /// Clear copy of the sealed expiry, so expired rows can be purged while locked. Checked
    /// against the sealed copy on every read.
    public var expiresAt: Date?
    /// The sealed ``ItemMetadata`` (names, label, attributes, dates).
    public var sealedMetadata: [UInt8]
    /// The sealed secret; empty in ``SealedStorage/listings()``.
    public var sealedSecret: [UInt8]

    public init(lookup: [UInt8], revision: UInt64, expiresAt: Date?, sealedMetadata: [UInt8], sealedSecret: [UInt8]) {
        self.lookup = lookup
        self.revision = revision
        self.expiresAt = expiresAt
        self.sealedMetadata = sealedMetadata
        self.sealedSecret = sealedSecret
    }
}
