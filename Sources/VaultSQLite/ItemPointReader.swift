import VaultCrypto
import Foundation
import GRDBSQLite
import Synchronization
import Vault
import VaultCore

/// The fast path's one read — the vault state joined with one item row — on a read-only SQLite
/// connection of its own, through SQLite's C API with one persistent prepared statement.
///
/// GRDB's `DatabaseQueue` runs every access through a dispatch queue's `sync` and materialises a
/// `Row` and `Data` values; on a Retrieve answered on the event loop that was about a tenth of the
/// daemon's CPU per call (`perf`, docs/speed.md). Here a read is a bind, a step and column copies,
/// under a lock (a SQLite connection serves one thread at a time).
///
/// A busy database (a checkpoint resetting the write-ahead log) is an error at once, not a wait: the
/// caller is the event loop, and ``SQLiteSealedStorage/readNow(lookup:)``'s caller answers such a
/// call on the slower path instead, whose reader waits for the lock.
final class ItemPointReader: @unchecked Sendable {
    /// The handles, used only while `lock` is held (and by `close()`, which takes it too).
    private var connection: OpaquePointer?
    private var statement: OpaquePointer?
    private let lock = Locked(())

    static let sql = """
        SELECT s.vault_id, s.generation, s.count, s.tag, i.lookup, i.revision, i.expires_at, i.metadata, i.secret
        FROM vault_state s LEFT JOIN items i ON i.lookup = ?1 WHERE s.id = 1
        """

    init(path: String) throws {
        var handle: OpaquePointer?
        let opened = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard opened == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw Self.failure(opened, doing: "open the vault database for reading")
        }
        sqlite3_busy_timeout(handle, 0)
        sqlite3_exec(handle, "PRAGMA cache_size = \(-SQLiteSealedStorage.readerCacheKiB)", nil, nil, nil)
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, Self.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard code == SQLITE_OK, let prepared else {
            sqlite3_close_v2(handle)
            throw Self.failure(code, doing: "prepare the item read")
        }
        connection = handle
        statement = prepared
    }

    deinit {
        closeHandles()
    }

    func close() {
        lock.withLock { _ in closeHandles() }
    }

    private func closeHandles() {
        sqlite3_finalize(statement)
        sqlite3_close_v2(connection)
        statement = nil
        connection = nil
    }

    /// One statement, so one snapshot: the state (nil when the vault has none yet) and the item row
    /// for `lookup` (nil when there is none).
    func read(lookup: [UInt8]) throws -> (state: SealedVaultState?, record: SealedRecord?) {
        try lock.withLock { _ in
            guard let statement else { throw VaultError.storageFailure("could not read an item: the vault database is closed") }
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            // Bound without a copy (SQLITE_STATIC, nil): the bytes outlive the step, which runs inside.
            return try lookup.withUnsafeBytes { bytes in
                let bound = sqlite3_bind_blob(statement, 1, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), nil)
                guard bound == SQLITE_OK else { throw Self.failure(bound, doing: "read an item") }
                let stepped = sqlite3_step(statement)
                switch stepped {
                case SQLITE_DONE:
                    return (nil, nil)
                case SQLITE_ROW:
                    let state = SealedVaultState(vaultID: Self.blob(statement, 0), generation: UInt64(bitPattern: sqlite3_column_int64(statement, 1)),
                                                 count: UInt64(bitPattern: sqlite3_column_int64(statement, 2)), tag: Self.blob(statement, 3))
                    guard sqlite3_column_type(statement, 4) != SQLITE_NULL else { return (state, nil) }
                    let expires = sqlite3_column_type(statement, 6) == SQLITE_NULL ? nil : Date(timeIntervalSince1970: sqlite3_column_double(statement, 6))
                    return (state, SealedRecord(
                        lookup: Self.blob(statement, 4), revision: UInt64(bitPattern: sqlite3_column_int64(statement, 5)),
                        expiresAt: expires, sealedMetadata: Self.blob(statement, 7), sealedSecret: Self.blob(statement, 8)))
                default:
                    throw Self.failure(stepped, doing: "read an item")
                }
            }
        }
    }

    /// A blob column's bytes, copied (the pointer is valid until the next step or reset). The pointer
    /// is asked for before the size, in the order SQLite's documentation gives.
    private static func blob(_ statement: OpaquePointer, _ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(statement, column) else { return [] }
        let count = Int(sqlite3_column_bytes(statement, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    private static func failure(_ code: Int32, doing what: String) -> VaultError {
        SQLiteSealedStorage.storageError(resultCode: code, doing: what)
    }
}
