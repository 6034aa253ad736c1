import FoundationEssentials
import GRDB
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
/// Writes (which fsync) run on the writer of a GRDB `DatabasePool`, off the caller's thread; every
/// read runs on the caller's thread on a read-only connection of ``SQLiteReaders``, in one snapshot,
/// and never waits behind a write (WAL lets a reader see the last commit while a writer writes).
public final class SQLiteSealedStorage: SealedStorage {
    private let pool: DatabasePool
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
        var config = Configuration()
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA secure_delete = ON")
            try db.execute(sql: "PRAGMA cache_size = \(-Self.writerCacheKiB)")
        }
        readers = SQLiteReaders(path: path, count: Self.readerCount)
        do {
            pool = try DatabasePool(path: path, configuration: config)
            try pool.writeWithoutTransaction { db in
                // The pool's WAL set-up lowers `synchronous` to NORMAL, which would make an
                // acknowledged store non-durable: the writer connection goes back to FULL.
                try db.execute(sql: "PRAGMA synchronous = FULL")
                let problems = try String.fetchAll(db, sql: "PRAGMA quick_check")
                guard problems == ["ok"] else {
                    throw VaultError.storageFailure(
                        "the vault database \(path) failed its integrity check (\(problems.prefix(3).joined(separator: "; "))); restore it from a backup")
                }
            }
            try Self.migrator.migrate(pool)
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
                journalMode: try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                synchronous: try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1,
                secureDelete: try Int.fetchOne(db, sql: "PRAGMA secure_delete") == 1)
        }
    }

    /// Closes the database; later calls fail.
    public func close() throws {
        readers.close()
        try pool.close()
    }

    /// Named, append-only schema migrations. Never edit one that has shipped; add another.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: header and sealed items") { db in
            try db.execute(sql: """
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
                """)
        }
        // The vault-wide authenticated state (rollback detection). A vault from before it gets its
        // first state when it is next unlocked.
        migrator.registerMigration("v2: vault state") { db in
            try db.execute(sql: """
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
                """)
        }
        return migrator
    }

    // MARK: SealedStorage

    public func readHeader() throws -> [UInt8]? {
        try readers.read("read the vault header") { reader in
            try reader.rows(.header) { $0.blob(0) }.first
        }
    }

    public func writeHeader(_ header: [UInt8], expected: [UInt8]?) async throws {
        try await access("write the vault header") { db in
            try db.inTransaction(.immediate) {
                let current = try Data.fetchOne(db, sql: "SELECT body FROM vault_header WHERE id = 1").map { Array($0) }
                if let expected {
                    guard current == expected else {
                        throw VaultError(.storageFailure, "the vault header changed while it was being updated; try again")
                    }
                } else if current != nil {
                    throw VaultError(.alreadyInitialized, "a vault already exists in \(self.path)")
                }
                try db.execute(sql: "INSERT OR REPLACE INTO vault_header (id, body) VALUES (1, ?)", arguments: [Data(header)])
                return .commit
            }
            if expected != nil { try self.scrubLog(db) }  // the old wrapped key must not linger in the WAL
        }
    }

    public func read(lookup: [UInt8]) throws -> (state: SealedVaultState?, record: SealedRecord?) {
        try readers.read("read an item") { reader in
            let record = try reader.rows(.item, binding: lookup) { Self.record(from: $0, withSecret: true) }
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
            try db.inTransaction(.immediate) {
                try Self.replaceState(db, state, expected: expected)
                try db.execute(sql: "DELETE FROM vault_entries")
                for entry in entries {
                    try Self.setEntry(db, lookup: entry.lookup, revision: entry.revision, expiresAt: entry.expiresAt)
                }
                return .commit
            }
        }
    }

    public func put(_ records: [SealedRecord], state: SealedVaultState, expected: UInt64?) async throws {
        try await access("store items") { db in
            var replaced = false
            try db.inTransaction(.immediate) {
                try Self.replaceState(db, state, expected: expected)
                for record in records {
                    try Self.setEntry(db, lookup: record.lookup, revision: record.revision, expiresAt: record.expiresAt?.timeIntervalSince1970)
                    let exists = try db.cachedStatement(sql: "SELECT 1 FROM items WHERE lookup = ?")
                    if try Bool.fetchOne(exists, arguments: [Data(record.lookup)]) ?? false { replaced = true }
                    try db.cachedStatement(sql: """
                        INSERT INTO items (lookup, revision, expires_at, metadata, secret) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (lookup) DO UPDATE SET revision = excluded.revision, expires_at = excluded.expires_at,
                            metadata = excluded.metadata, secret = excluded.secret
                        """).execute(arguments: [Data(record.lookup), Int64(bitPattern: record.revision),
                                                  record.expiresAt?.timeIntervalSince1970, Data(record.sealedMetadata), Data(record.sealedSecret)])
                }
                return .commit
            }
            if replaced { try self.scrubLog(db) }
        }
    }

    public func delete(lookup: [UInt8], state: SealedVaultState, expected: UInt64?) async throws -> Bool {
        try await access("delete an item") { db in
            var deleted = false
            try db.inTransaction(.immediate) {
                try Self.replaceState(db, state, expected: expected)
                try db.execute(sql: "DELETE FROM items WHERE lookup = ?", arguments: [Data(lookup)])
                deleted = db.changesCount > 0
                try db.execute(sql: "DELETE FROM vault_entries WHERE lookup = ?", arguments: [Data(lookup)])
                return .commit
            }
            if deleted { try self.scrubLog(db) }
            return deleted
        }
    }

    /// Inside a write transaction: replaces the state if its stored generation is still `expected`.
    static func replaceState(_ db: Database, _ state: SealedVaultState, expected: UInt64?) throws {
        let current = try Int64.fetchOne(db, sql: "SELECT generation FROM vault_state WHERE id = 1").map { UInt64(bitPattern: $0) }
        guard current == expected else { throw StateConflict() }
        try db.execute(sql: "INSERT OR REPLACE INTO vault_state (id, vault_id, generation, count, tag) VALUES (1, ?, ?, ?, ?)",
                       arguments: [Data(state.vaultID), Int64(bitPattern: state.generation), Int64(bitPattern: state.count), Data(state.tag)])
    }

    static func setEntry(_ db: Database, lookup: [UInt8], revision: UInt64, expiresAt: Double?) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO vault_entries (lookup, revision, expires_at) VALUES (?, ?, ?)",
                       arguments: [Data(lookup), Int64(bitPattern: revision), expiresAt])
    }

    public func deleteExpired(asOf date: Date) async throws -> Int {
        try await access("purge expired items") { db in
            try db.execute(sql: "DELETE FROM items WHERE expires_at IS NOT NULL AND expires_at <= ?",
                           arguments: [date.timeIntervalSince1970])
            let count = db.changesCount
            if count > 0 { try self.scrubLog(db) }
            return count
        }
    }

    // MARK: Helpers

    /// Copies every committed page into the database file and truncates the `-wal` to zero bytes, so
    /// ciphertext that `secure_delete` zeroed in the database does not survive in old WAL frames.
    func scrubLog(_ db: Database) throws {
        let result = try db.checkpoint(.truncate)
        guard result.walFrameCount == 0 || result.walFrameCount == result.checkpointedFrameCount else {
            throw VaultError.storageFailure("the write-ahead log could not be scrubbed because another process holds the database open; stop it and retry")
        }
    }

    /// Runs `body` on the pool's writer without blocking the caller: for writes, which fsync.
    func access<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.writeWithoutTransaction(body)
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

    /// Maps a SQLite error to a `VaultError` with no statement arguments in it (GRDB leaves them out
    /// of descriptions by default).
    static func storageError(_ error: Error, doing what: String) -> VaultError {
        if let db = error as? DatabaseError {
            return storageError(resultCode: db.resultCode.rawValue, doing: what)
        }
        return VaultError.storageFailure("could not \(what): \(error)")
    }

    /// What a SQLite result code (primary or extended) means to the user, and what to do.
    static func storageError(resultCode code: Int32, doing what: String) -> VaultError {
        let hint: String
        switch ResultCode(rawValue: code & 0xFF) {
        case .SQLITE_FULL: hint = "the disk is full; free some space and retry"
        case .SQLITE_BUSY, .SQLITE_LOCKED: hint = "another process holds the vault database; stop it and retry"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: hint = "the database file is damaged; restore it from a backup"
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN: hint = "check the permissions of the vault directory"
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
