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
/// Why not GRDB's `DatabasePool.read`, which the writes use: it runs each read through a dispatch
/// queue's `sync`, checks the schema version, starts the transaction from SQL text and builds `Row`
/// and `Data` values, which cost more than the read itself on a call answered on the event loop.
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
        return try taken ?? SQLiteReader(path: path)
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

/// A SQLite result code other than OK, ROW and DONE.
struct SQLiteCode: Error {
    let value: Int32
    init(_ value: Int32) { self.value = value }
}

/// One read-only connection and its prepared statements, used by one thread at a time: passed
/// between threads only through ``SQLiteReaders``' lock (hence unchecked).
final class SQLiteReader: @unchecked Sendable {
    private var connection: OpaquePointer?
    /// One slot per ``SQLiteReadStatement``, prepared on first use.
    private var statements = [OpaquePointer?](repeating: nil, count: SQLiteReadStatement.allCases.count)

    init(path: String) throws {
        var handle: OpaquePointer?
        let opened = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard opened == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw SQLiteCode(opened)
        }
        // As the writer's connection: wait up to 5 s for a lock (a checkpoint resetting the log).
        sqlite3_busy_timeout(handle, 5_000)
        sqlite3_exec(handle, "PRAGMA cache_size = \(-SQLiteSealedStorage.readerCacheKiB)", nil, nil, nil)
        connection = handle
    }

    deinit { close() }

    func close() {
        for index in statements.indices {
            sqlite3_finalize(statements[index])
            statements[index] = nil
        }
        sqlite3_close_v2(connection)
        connection = nil
    }

    func begin() throws { try run(.begin) }
    func commit() throws { try run(.commit) }
    func rollBack() { try? run(.rollBack) }

    /// Whether the connection is open and in autocommit mode, that is, no transaction is left open.
    var isOutsideTransaction: Bool {
        guard let connection else { return false }
        return sqlite3_get_autocommit(connection) != 0
    }

    private func run(_ query: SQLiteReadStatement) throws {
        let statement = try prepared(query)
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else { throw SQLiteCode(code) }
    }

    /// The rows of `query` with `blob` bound to its one parameter (if given), each turned into a value
    /// by `row` while it is current.
    func rows<T>(_ query: SQLiteReadStatement, binding blob: [UInt8]? = nil, _ row: (SQLiteRow) throws -> T) throws -> [T] {
        let statement = try prepared(query)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        // Bound without a copy (SQLITE_STATIC, nil): the bytes outlive the steps, which run inside.
        return try (blob ?? []).withUnsafeBytes { bytes in
            if blob != nil {
                let bound = sqlite3_bind_blob(statement, 1, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), nil)
                guard bound == SQLITE_OK else { throw SQLiteCode(bound) }
            }
            var result: [T] = []
            while true {
                let stepped = sqlite3_step(statement)
                if stepped == SQLITE_DONE { return result }
                guard stepped == SQLITE_ROW else { throw SQLiteCode(stepped) }
                result.append(try row(SQLiteRow(statement: statement)))
            }
        }
    }

    private func prepared(_ query: SQLiteReadStatement) throws -> OpaquePointer {
        if let statement = statements[query.rawValue] { return statement }
        guard let connection else { throw SQLiteCode(SQLITE_MISUSE) }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, query.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw SQLiteCode(code) }
        statements[query.rawValue] = statement
        return statement
    }
}

/// The current row of a stepped statement: valid only inside the closure given to ``SQLiteReader/rows(_:binding:_:)``.
struct SQLiteRow {
    let statement: OpaquePointer

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func double(_ column: Int32) -> Double? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_double(statement, column)
    }

    /// A blob column's bytes, copied (SQLite's pointer lasts until the next step). The pointer is
    /// asked for before the size, in the order SQLite's documentation gives.
    func blob(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))))
    }
}
