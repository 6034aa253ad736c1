import GRDBSQLite

/// A fixed set of statements a ``SQLiteConnection`` keeps prepared in slots by number, so a call never
/// parses or hashes SQL text to find one. Each set names its own transaction statements.
protocol SQLiteStatementSet: RawRepresentable, CaseIterable where RawValue == Int {
    var sql: String { get }
    static var begin: Self { get }
    static var commit: Self { get }
    static var rollBack: Self { get }
}

/// A SQLite result code other than OK, ROW and DONE.
struct SQLiteCode: Error {
    let value: Int32
    init(_ value: Int32) { self.value = value }
}

/// A value bound to a statement's parameter.
enum SQLiteValue {
    case blob([UInt8])
    case integer(Int64)
    /// A real, or NULL when nil.
    case real(Double?)
    case text(String)
}

/// One connection of SQLite's C API and its prepared statements, used by one thread at a time:
/// ``SQLiteReaders`` lends read-only ones through its lock, ``SQLiteWriter`` keeps its one on its
/// queue (hence unchecked).
///
/// ```swift
/// let connection = try SQLiteConnection<SQLiteReadStatement>(path: path, readOnly: true, cacheKiB: 256)
/// let count = try connection.rows(.count) { row in row.int64(0) }.first ?? 0
/// ```
final class SQLiteConnection<Statement: SQLiteStatementSet>: @unchecked Sendable {
    private var connection: OpaquePointer?
    /// One slot per statement of the set, prepared on first use.
    private var statements = [OpaquePointer?](repeating: nil, count: Statement.allCases.count)

    /// Opens `path` (which must exist when `readOnly`), waiting up to 5 s for a lock another
    /// connection holds (a checkpoint resetting the log), with a page cache of `cacheKiB`.
    init(path: String, readOnly: Bool, cacheKiB: Int) throws {
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
        let opened = sqlite3_open_v2(path, &handle, flags, nil)
        guard opened == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw SQLiteCode(opened)
        }
        connection = handle
        sqlite3_busy_timeout(handle, 5_000)
        try execute(sql: "PRAGMA cache_size = \(-cacheKiB)")
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

    /// Runs `body` between the set's `begin` and `commit`; a thrown error rolls the transaction back.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try begin()
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollBack()
            throw error
        }
    }

    /// Whether the connection is open and in autocommit mode, that is, no transaction is left open.
    var isOutsideTransaction: Bool {
        guard let connection else { return false }
        return sqlite3_get_autocommit(connection) != 0
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int {
        connection.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// Steps `query` to its end with `values` bound to its parameters, in order.
    func run(_ query: Statement, _ values: SQLiteValue...) throws {
        _ = try collect(query, values) { _ in () }
    }

    /// The rows of `query` with `values` bound to its parameters, each turned into a value by `row`
    /// while it is current.
    func rows<T>(_ query: Statement, _ values: SQLiteValue..., row: (SQLiteRow) throws -> T) throws -> [T] {
        try collect(query, values, row)
    }

    private func collect<T>(_ query: Statement, _ values: [SQLiteValue], _ row: (SQLiteRow) throws -> T) throws -> [T] {
        let statement = try prepared(query)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in values.enumerated() {
            try Self.bind(value, to: statement, at: Int32(index + 1))
        }
        return try Self.step(statement, row)
    }

    /// Runs SQL text that returns no rows: pragmas and schema changes.
    func execute(sql: String) throws {
        guard let connection else { throw SQLiteCode(SQLITE_MISUSE) }
        let code = sqlite3_exec(connection, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteCode(code) }
    }

    /// The first column of every row of one statement of SQL text, as text: pragmas' answers.
    func texts(sql: String) throws -> [String] {
        guard let connection else { throw SQLiteCode(SQLITE_MISUSE) }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw SQLiteCode(code) }
        defer { sqlite3_finalize(statement) }
        return try Self.step(statement) { row in row.text(0) }
    }

    /// Copies every committed frame of the log into the database and truncates the log to zero bytes;
    /// the frame counts are those `sqlite3_wal_checkpoint_v2` reports.
    func checkpointTruncating() throws -> (logFrames: Int32, checkpointed: Int32) {
        guard let connection else { throw SQLiteCode(SQLITE_MISUSE) }
        var logFrames: Int32 = -1, checkpointed: Int32 = -1
        let code = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointed)
        guard code == SQLITE_OK else { throw SQLiteCode(code) }
        return (logFrames, checkpointed)
    }

    private static func step<T>(_ statement: OpaquePointer, _ row: (SQLiteRow) throws -> T) throws -> [T] {
        var result: [T] = []
        while true {
            let stepped = sqlite3_step(statement)
            if stepped == SQLITE_DONE { return result }
            guard stepped == SQLITE_ROW else { throw SQLiteCode(stepped) }
            result.append(try row(SQLiteRow(statement: statement)))
        }
    }

    /// SQLite copies what is bound (`SQLITE_TRANSIENT`): the Swift value need not outlive the call.
    private static func bind(_ value: SQLiteValue, to statement: OpaquePointer, at index: Int32) throws {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let code: Int32
        switch value {
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob(statement, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                  Int32(buffer.count), transient)
            }
        case .integer(let number):
            code = sqlite3_bind_int64(statement, index, number)
        case .real(let number?):
            code = sqlite3_bind_double(statement, index, number)
        case .real(nil):
            code = sqlite3_bind_null(statement, index)
        case .text(let text):
            code = sqlite3_bind_text(statement, index, text, -1, transient)
        }
        guard code == SQLITE_OK else { throw SQLiteCode(code) }
    }

    private func prepared(_ query: Statement) throws -> OpaquePointer {
        if let statement = statements[query.rawValue] { return statement }
        guard let connection else { throw SQLiteCode(SQLITE_MISUSE) }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, query.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw SQLiteCode(code) }
        statements[query.rawValue] = statement
        return statement
    }
}

/// The current row of a stepped statement: valid only inside the closure given to ``SQLiteConnection/rows(_:_:row:)``.
struct SQLiteRow {
    let statement: OpaquePointer

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func double(_ column: Int32) -> Double? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_double(statement, column)
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    /// A blob column's bytes, copied (SQLite's pointer lasts until the next step). The pointer is
    /// asked for before the size, in the order SQLite's documentation gives.
    func blob(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))))
    }

    /// A text column's value; empty for NULL.
    func text(_ column: Int32) -> String {
        guard let characters = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: characters)
    }
}
