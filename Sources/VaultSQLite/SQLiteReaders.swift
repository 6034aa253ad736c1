import Foundation
import GRDBSQLite
import VaultCore
import VaultCrypto

/// Every read of ``SQLiteSealedStorage``: read-only connections of SQLite's C API, each with its
/// statements prepared once, handed to one thread at a time. A read takes a free connection (or
/// opens one, up to ``SQLiteSealedStorage/readerCount`` in all), runs its statements between one
/// `BEGIN` and `COMMIT` (one snapshot), and gives the connection back.
///
/// ```swift
/// let readers = SQLiteReaders(path: path)
/// let count = try readers.read("count items") { reader in
///     try reader.rows("SELECT count(*) FROM items") { row in row.int64(0) }.first ?? 0
/// }
/// ```
///
/// Why not GRDB's `DatabasePool.read`, which the writes use: it runs each read through a dispatch
/// queue's `sync`, checks the schema version, starts the transaction from SQL text and builds `Row`
/// and `Data` values, which cost more than the read itself on a call answered on the event loop.
final class SQLiteReaders: @unchecked Sendable {
    private let path: String
    /// Free connections, and how many are open in all (free or lent).
    private let free = Locked<(connections: [SQLiteReader], open: Int, closed: Bool)>(([], 0, false))
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
            let result: T
            do { result = try body(reader) } catch {
                reader.rollBack()
                throw error
            }
            try reader.commit()
            return result
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
            if let connection = state.connections.popLast() { return connection }
            state.open += 1
            return nil
        }
        if let taken { return taken }
        do { return try SQLiteReader(path: path) } catch {
            free.withLock { $0.open -= 1 }
            throw error
        }
    }

    private func give(_ reader: SQLiteReader) {
        let keep = free.withLock { state -> Bool in
            guard !state.closed else { return false }
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
    private var statements: [String: OpaquePointer] = [:]

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
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        sqlite3_close_v2(connection)
        connection = nil
    }

    func begin() throws { try run("BEGIN DEFERRED") }
    func commit() throws { try run("COMMIT") }
    func rollBack() { try? run("ROLLBACK") }

    private func run(_ sql: String) throws {
        let statement = try prepared(sql)
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else { throw SQLiteCode(code) }
    }

    /// The rows of `sql` with `blob` bound to its one parameter (if given), each turned into a value
    /// by `row` while it is current.
    func rows<T>(_ sql: String, binding blob: [UInt8]? = nil, _ row: (SQLiteRow) throws -> T) throws -> [T] {
        let statement = try prepared(sql)
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

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        guard let connection else { throw SQLiteCode(SQLITE_MISUSE) }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw SQLiteCode(code) }
        statements[sql] = statement
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
