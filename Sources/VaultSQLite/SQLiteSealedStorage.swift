import FoundationEssentials
import GRDBSQLite
import Vault
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// The embedded default storage: one SQLite file holding the vault header and sealed records.
///
/// ```swift
/// let storage = try SQLiteSealedStorage(path: "\(dataDir)/vault.db")
/// ```
///
/// WAL journal with `synchronous=FULL` (a store is durable once acknowledged), `secure_delete=ON`
/// (freed content is overwritten with zeros), and a TRUNCATE checkpoint after every delete or
/// replacement, so no old ciphertext lingers in the database or its `-wal` file. The file is created
/// with mode 0600; `quick_check` runs on every open.
///
/// Writes (which fsync) run on ``SQLiteWriter``'s queue, off the caller's thread; every read runs on
/// the caller's thread on a read-only connection of ``SQLiteReaders``, in one snapshot, and never
/// waits behind a write (WAL lets a reader see the last commit while a writer writes). Both use
/// SQLite's C API with their statements prepared once.
public final class SQLiteSealedStorage: SealedStorage {
    private let writer: SQLiteWriter
    private let readers: SQLiteReaders
    /// The database file's path.
    public let path: String

    /// Page cache per connection, in KiB (SQLite's default is 2,000 KiB each). The operating
    /// system caches the file as well, so a miss costs a `pread`, not a disk read; a point read or
    /// a store touches a handful of pages.
    static let writerCacheKiB = 512
    static let readerCacheKiB = 256
    /// Read connections: reads take microseconds, so a few serve every thread that reads at once
    /// (the event loops and the threads of the vault's tasks); a ninth waits for one of them.
    static let readerCount = 8

    public init(path: String) throws {
        self.path = path
        try Self.createPrivately(path)
        readers = SQLiteReaders(path: path, count: Self.readerCount)
        do {
            writer = try SQLiteWriter(path: path, cacheKiB: Self.writerCacheKiB)
            try writer.writeNow { db in
                try db.execute(sql: "PRAGMA secure_delete = ON")
                guard try db.texts(sql: "PRAGMA journal_mode = WAL") == ["wal"] else {
                    throw VaultError.storageFailure("the vault database \(path) cannot use a write-ahead log; check that its directory is on a local file system")
                }
                // Every commit is fsynced before a store is acknowledged.
                try db.execute(sql: "PRAGMA synchronous = FULL")
                let problems = try db.texts(sql: "PRAGMA quick_check")
                guard problems == ["ok"] else {
                    throw VaultError.storageFailure(
                        "the vault database \(path) failed its integrity check (\(problems.prefix(3).joined(separator: "; "))); restore it from a backup")
                }
                try Self.migrate(db)
            }
        } catch let error as VaultError {
            throw error
        } catch {
            throw Self.storageError(error, doing: "open the vault database \(path)")
        }
    }

    /// The durability and scrubbing settings in force on the live connection, for `status` and tests.
    public func settings() async throws -> StorageSettings {
        try await access("read the database settings") { db in
            StorageSettings(
                journalMode: try db.texts(sql: "PRAGMA journal_mode").first ?? "",
                synchronous: try db.texts(sql: "PRAGMA synchronous").first.flatMap { Int($0) } ?? -1,
                secureDelete: try db.texts(sql: "PRAGMA secure_delete") == ["1"])
        }
    }

    /// Closes the database; later calls fail.
    public func close() throws {
        readers.close()
        writer.writeNow { $0.close() }
    }

    /// Named, append-only schema migrations. Never edit one that has shipped; add another. Their
    /// names are recorded in `grdb_migrations`, the table (and naming) vaults on disk already carry.
    static let migrations: [(identifier: String, sql: String)] = [
        ("v1: header and sealed items", """
            CREATE TABLE vault_header (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                body BLOB NOT NULL
            );
            CREATE TABLE items (
                id INTEGER PRIMARY KEY,
                lookup BLOB NOT NULL UNIQUE,
                revision INTEGER NOT NULL,
                expires_at REAL,
                metadata BLOB NOT NULL,
                secret BLOB NOT NULL
            );
            CREATE INDEX items_by_expiry ON items(expires_at) WHERE expires_at IS NOT NULL;
            """),
        // The vault-wide authenticated state (rollback detection). A vault from before it gets its
        // first state when it is next unlocked.
        ("v2: vault state", """
            CREATE TABLE vault_state (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                vault_id BLOB NOT NULL,
                generation INTEGER NOT NULL,
                count INTEGER NOT NULL,
                tag BLOB NOT NULL
            );
            CREATE TABLE vault_entries (
                lookup BLOB PRIMARY KEY,
                revision INTEGER NOT NULL,
                expires_at REAL
            ) WITHOUT ROWID;
            """),
    ]

    /// Applies the migrations the database has not recorded, all in one transaction.
    static func migrate(_ db: SQLiteConnection<SQLiteWriteStatement>) throws {
        try db.inTransaction {
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = Set(try db.rows(.appliedMigrations) { $0.text(0) })
            for migration in migrations where !applied.contains(migration.identifier) {
                try db.execute(sql: migration.sql)
                try db.run(.recordMigration, .text(migration.identifier))
            }
        }
    }

    // MARK: SealedStorage

    public func readHeader() throws -> [UInt8]? {
        try readers.read("read the vault header") { reader in
            try reader.rows(.header) { $0.blob(0) }.first
        }
    }

    public func writeHeader(_ header: [UInt8], expected: [UInt8]?) async throws {
        try await access("write the vault header") { db in
            try db.inTransaction {
                let current = try db.rows(.header) { $0.blob(0) }.first
                if let expected {
                    guard current == expected else {
                        throw VaultError(.storageFailure, "the vault header changed while it was being updated; try again")
                    }
                } else if current != nil {
                    throw VaultError(.alreadyInitialized, "a vault already exists in \(self.path)")
                }
                try db.run(.setHeader, .blob(header))
            }
            if expected != nil { try self.scrubLog(db) }  // the old wrapped key must not linger in the WAL
        }
    }

    public func read(lookup: [UInt8]) throws -> (state: SealedVaultState?, record: SealedRecord?) {
        try readers.read("read an item") { reader in
            let record = try reader.rows(.item, .blob(lookup)) { Self.record(from: $0, withSecret: true) }
            return (try Self.state(reader), record.first)
        }
    }

    public func readState() throws -> SealedVaultState? {
        try readers.read("read the vault state") { reader in try Self.state(reader) }
    }

    public func stateEntries() throws -> [StateEntry] {
        try readers.read("read the vault state") { reader in
            try reader.rows(.entries) { row in
                StateEntry(lookup: row.blob(0), revision: UInt64(bitPattern: row.int64(1)), expiresAt: row.double(2))
            }
        }
    }

    public func listings() throws -> (state: SealedVaultState?, records: [SealedRecord]) {
        try readers.read("list items") { reader in
            let records = try reader.rows(.listings) {
                Self.record(from: $0, withSecret: false)
            }
            return (try Self.state(reader), records)
        }
    }

    public func snapshot() throws -> (state: SealedVaultState?, records: [SealedRecord]) {
        try readers.read("read every item") { reader in
            let records = try reader.rows(.snapshot) {
                Self.record(from: $0, withSecret: true)
            }
            return (try Self.state(reader), records)
        }
    }

    public func count() throws -> Int {
        try readers.read("count items") { reader in
            Int(try reader.rows(.count) { $0.int64(0) }.first ?? 0)
        }
    }

    /// The state row, inside a read.
    private static func state(_ reader: SQLiteReader) throws -> SealedVaultState? {
        try reader.rows(.state) { row in
            SealedVaultState(vaultID: row.blob(0), generation: UInt64(bitPattern: row.int64(1)),
                             count: UInt64(bitPattern: row.int64(2)), tag: row.blob(3))
        }.first
    }

    public func writeState(_ state: SealedVaultState, entries: [StateEntry], expected: UInt64?) async throws {
        try await access("write the vault state") { db in
            try db.inTransaction {
                try Self.replaceState(db, state, expected: expected)
                try db.run(.clearEntries)
                for entry in entries {
                    try Self.setEntry(db, lookup: entry.lookup, revision: entry.revision, expiresAt: entry.expiresAt)
                }
            }
        }
    }

    public func put(_ records: [SealedRecord], state: SealedVaultState, expected: UInt64?) async throws {
        try await access("store items") { db in
            let replaced = try db.inTransaction {
                var replaced = false
                try Self.replaceState(db, state, expected: expected)
                for record in records {
                    let expiresAt = record.expiresAt?.timeIntervalSince1970
                    try Self.setEntry(db, lookup: record.lookup, revision: record.revision, expiresAt: expiresAt)
                    if try !db.rows(.itemExists, .blob(record.lookup), row: { _ in () }).isEmpty { replaced = true }
                    try db.run(.putItem, .blob(record.lookup), .integer(Int64(bitPattern: record.revision)), .real(expiresAt),
                               .blob(record.sealedMetadata), .blob(record.sealedSecret))
                }
                return replaced
            }
            if replaced { try self.scrubLog(db) }
        }
    }

    public func delete(lookup: [UInt8], state: SealedVaultState, expected: UInt64?) async throws -> Bool {
        try await access("delete an item") { db in
            let deleted = try db.inTransaction {
                try Self.replaceState(db, state, expected: expected)
                try db.run(.deleteItem, .blob(lookup))
                let deleted = db.changes > 0
                try db.run(.deleteEntry, .blob(lookup))
                return deleted
            }
            if deleted { try self.scrubLog(db) }
            return deleted
        }
    }

    /// Inside a write transaction: replaces the state if its stored generation is still `expected`.
    static func replaceState(_ db: SQLiteConnection<SQLiteWriteStatement>, _ state: SealedVaultState, expected: UInt64?) throws {
        let current = try db.rows(.generation) { UInt64(bitPattern: $0.int64(0)) }.first
        guard current == expected else { throw StateConflict() }
        try db.run(.setState, .blob(state.vaultID), .integer(Int64(bitPattern: state.generation)),
                   .integer(Int64(bitPattern: state.count)), .blob(state.tag))
    }

    static func setEntry(_ db: SQLiteConnection<SQLiteWriteStatement>, lookup: [UInt8], revision: UInt64, expiresAt: Double?) throws {
        try db.run(.setEntry, .blob(lookup), .integer(Int64(bitPattern: revision)), .real(expiresAt))
    }

    public func deleteExpired(asOf date: Date) async throws -> Int {
        try await access("purge expired items") { db in
            try db.run(.deleteExpired, .real(date.timeIntervalSince1970))
            let count = db.changes
            if count > 0 { try self.scrubLog(db) }
            return count
        }
    }

    // MARK: Helpers

    /// Copies every committed page into the database file and truncates the `-wal` to zero bytes, so
    /// ciphertext that `secure_delete` zeroed in the database does not survive in old WAL frames.
    func scrubLog(_ db: SQLiteConnection<SQLiteWriteStatement>) throws {
        let result = try db.checkpointTruncating()
        guard result.logFrames == 0 || result.logFrames == result.checkpointed else {
            throw VaultError.storageFailure("the write-ahead log could not be scrubbed because another process holds the database open; stop it and retry")
        }
    }

    /// Runs `body` on the writer without blocking the caller: for writes, which fsync.
    func access<T: Sendable>(_ what: String, _ body: @escaping @Sendable (SQLiteConnection<SQLiteWriteStatement>) throws -> T) async throws -> T {
        do {
            return try await writer.write(body)
        } catch let error as VaultError {
            throw error
        } catch let conflict as StateConflict {
            throw conflict
        } catch {
            throw Self.storageError(error, doing: what)
        }
    }

    /// A record from a row of `lookup, revision, expires_at, metadata[, secret]`.
    static func record(from row: SQLiteRow, withSecret: Bool) -> SealedRecord {
        SealedRecord(
            lookup: row.blob(0), revision: UInt64(bitPattern: row.int64(1)),
            expiresAt: row.double(2).map(Date.init(timeIntervalSince1970:)),
            sealedMetadata: row.blob(3), sealedSecret: withSecret ? row.blob(4) : [])
    }

    /// Maps a SQLite error to a `VaultError` with no statement arguments in it: only the result code
    /// is kept.
    static func storageError(_ error: Error, doing what: String) -> VaultError {
        if let code = error as? SQLiteCode {
            return storageError(resultCode: code.value, doing: what)
        }
        return VaultError.storageFailure("could not \(what): \(error)")
    }

    /// What a SQLite result code (primary or extended) means to the user, and what to do.
    static func storageError(resultCode code: Int32, doing what: String) -> VaultError {
        let hint: String
        switch code & 0xFF {
        case SQLITE_FULL: hint = "the disk is full; free some space and retry"
        case SQLITE_BUSY, SQLITE_LOCKED: hint = "another process holds the vault database; stop it and retry"
        case SQLITE_CORRUPT, SQLITE_NOTADB: hint = "the database file is damaged; restore it from a backup"
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN: hint = "check the permissions of the vault directory"
        default: hint = "SQLite error \(code)"
        }
        return VaultError.storageFailure("could not \(what): \(hint)")
    }

    /// Creates the database file with mode 0600 before SQLite does (SQLite would use 0644 less the
    /// umask); its `-wal` and `-shm` files inherit that mode.
    private static func createPrivately(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw VaultError.storageFailure("cannot open the vault database \(path): \(String(cString: strerror(code)))")
        }
        _ = Glibc.close(fd)
    }
}

/// SQLite settings of the live connection.
public struct StorageSettings: Sendable, Equatable {
    public var journalMode: String
    /// 2 is FULL: every commit is fsynced before it is acknowledged.
    public var synchronous: Int
    public var secureDelete: Bool
}
