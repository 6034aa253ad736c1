import Foundation
import VaultCore

/// What a storage backend keeps: opaque, already-sealed bytes. Like Vault's physical backend, a
/// storage is only ever reached through ``EncryptedVault``, which encrypts above it; a storage
/// never sees a key, a secret or an item name.
public protocol SealedStorage: Sendable {
    /// The vault header (key slots and format), or nil when the vault has not been initialised.
    func readHeader() async throws -> [UInt8]?
    /// Writes the header atomically. With `expected == nil` it creates one and throws
    /// `.alreadyInitialized` if one exists; otherwise it replaces the header only if the stored one
    /// still equals `expected` (compare-and-swap), so a concurrent change is never lost.
    func writeHeader(_ header: [UInt8], expected: [UInt8]?) async throws
    /// The record stored under `lookup`.
    func record(for lookup: [UInt8]) async throws -> SealedRecord?
    /// The vault state (see ``SealedVaultState``), or nil before one was first sealed. One small row.
    func readState() async throws -> SealedVaultState?
    /// Every entry the state names, in any order.
    func stateEntries() async throws -> [StateEntry]
    /// Replaces the state and all its entries, durably, if the stored generation is still `expected`
    /// (nil: no state yet); otherwise throws ``StateConflict`` and changes nothing.
    func writeState(_ state: SealedVaultState, entries: [StateEntry], expected: UInt64?) async throws
    /// Inserts or replaces the record under `record.lookup`, sets its entry (lookup, revision, expiry)
    /// and replaces the state, durably, in one transaction, under the same `expected` check as
    /// ``writeState(_:entries:expected:)``. Replaced ciphertext must not stay recoverable from the files.
    func put(_ record: SealedRecord, state: SealedVaultState, expected: UInt64?) async throws
    /// Deletes the record under `lookup` (scrubbing its ciphertext) and its entry, and replaces the
    /// state, in one transaction, under the same `expected` check; returns whether a record existed.
    func delete(lookup: [UInt8], state: SealedVaultState, expected: UInt64?) async throws -> Bool
    /// Every record without its sealed secret, for listing.
    func listings() async throws -> [SealedRecord]
    /// How many records are stored (expired ones included until purged).
    func count() async throws -> Int
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
