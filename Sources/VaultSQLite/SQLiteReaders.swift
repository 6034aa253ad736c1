import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import GRDBSQLite
import VaultCore
import VaultCrypto

/// Every read of ``SQLiteSealedStorage``: read-only connections of SQLite's C API, each with its
/// statements (``SQLiteReadStatement``) prepared once, handed to one thread at a time. A read takes a
/// free connection (or opens one, up to ``SQLiteSealedStorage/readerCount`` in all), runs its
/// statements between one `BEGIN` and `COMMIT` (one snapshot), and gives the connection back.
///
/// ```swift
/// let readers = SQLiteReaders(path: path, count: 4)
/// let count = try readers.read("count items") { reader in
///     try reader.rows(.count) { row in row.int64(0) }.first ?? 0
/// }
/// ```
///
/// Reads run on the caller's thread (an event loop answers a read without a hop); a read's statements
/// are prepared once per connection, and its rows are copied straight out of SQLite's buffers.
final class SQLiteReaders: @unchecked Sendable {
    private let path: String
    /// Free connections; `closed` once ``close()`` ran.
    private let free = Locked<(connections: [SQLiteReader], closed: Bool)>(([], false))
    /// Counts the connections that may be lent at once: a reader beyond them waits for one.
    private let slots: DispatchSemaphore

    init(path: String, count: Int) {
        self.path = path
        slots = DispatchSemaphore(value: count)
    }

    /// Runs `body` on a connection, inside one read transaction. Errors are `VaultError`s naming `what`.
    func read<T>(_ what: String, _ body: (SQLiteReader) throws -> T) throws -> T {
        slots.wait()
        defer { slots.signal() }
        let reader: SQLiteReader
        do { reader = try take() } catch let code as SQLiteCode {
            throw SQLiteSealedStorage.storageError(resultCode: code.value, doing: what)
        }
        defer { give(reader) }
        do {
            try reader.begin()
            do {
                let result = try body(reader)
                try reader.commit()
                return result
            } catch {
                // A failed step or COMMIT leaves the transaction open; the next read on this connection
                // would fail to BEGIN, or see this snapshot. ``give(_:)`` drops the connection if it is still open.
                reader.rollBack()
                throw error
            }
        } catch let code as SQLiteCode {
            throw SQLiteSealedStorage.storageError(resultCode: code.value, doing: what)
        }
    }

    /// Closes every connection; later reads fail.
    func close() {
        let connections = free.withLock { state -> [SQLiteReader] in
            state.closed = true
            defer { state.connections = [] }
            return state.connections
        }
        for connection in connections { connection.close() }
    }

    private func take() throws -> SQLiteReader {
        let taken = try free.withLock { state -> SQLiteReader? in
            if state.closed { throw SQLiteCode(SQLITE_MISUSE) }
            return state.connections.popLast()
        }
        return try taken ?? SQLiteReader(path: path, readOnly: true, cacheKiB: SQLiteSealedStorage.readerCacheKiB)
    }

    /// Lends `reader` again, unless the readers are closed or it is still inside a transaction (its
    /// ROLLBACK failed too): then it is closed, and the next read opens a fresh one.
    private func give(_ reader: SQLiteReader) {
        let idle = reader.isOutsideTransaction
        let keep = free.withLock { state -> Bool in
            guard !state.closed, idle else { return false }
            state.connections.append(reader)
            return true
        }
        if !keep { reader.close() }
    }
}

/// A read-only connection with the reads' statements.
typealias SQLiteReader = SQLiteConnection<SQLiteReadStatement>
