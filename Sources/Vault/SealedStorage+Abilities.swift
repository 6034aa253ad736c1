/// Optional abilities of a ``SealedStorage``, apart from the four-method core: an ``EncryptedVault``
/// uses them when its storage has them and falls back to the async core when it has not.

/// Synchronous reads that never wait behind a write: the vault's fast path (``EncryptedVault/retrieveNow(_:)``)
/// answers from them on the caller's thread, without an actor hop or a task.
///
/// ```swift
/// if let reads = storage as? any SealedStorageReadingNow {
///     let (state, record) = try reads.readNow(lookup: lookup)
/// }
/// ```
///
/// Implementations must read committed data only, on a connection no writer holds (SQLite: a
/// separate read connection in WAL mode), so that a read never waits for a write's fsync; and each
/// call must read its rows in one snapshot. A caller on an event loop relies on it taking microseconds:
/// do not wait for locks (fail instead; the caller then takes the async path).
public protocol SealedStorageReadingNow: SealedStorage {
    /// The vault state and the record under `lookup`, from one snapshot.
    func readNow(lookup: [UInt8]) throws -> (state: SealedVaultState?, record: SealedRecord?)
    /// The vault state and every record without its secret (as ``SealedStorage/listings()``), from one snapshot.
    func listNow() throws -> (state: SealedVaultState?, records: [SealedRecord])
    /// The vault header (as ``SealedStorage/readHeader()``).
    func readHeaderNow() throws -> [UInt8]?
}

/// Group commit: several records written with one state change, in one transaction and one fsync.
public protocol SealedStorageGroupWrites: SealedStorage {
    /// Inserts or replaces every record (their lookups are distinct), sets their entries and replaces
    /// the state once, durably, in one transaction, under the same `expected` check as
    /// ``SealedStorage/put(_:state:expected:)``: all of them are written, or none.
    func put(group records: [SealedRecord], state: SealedVaultState, expected: UInt64?) async throws
}
