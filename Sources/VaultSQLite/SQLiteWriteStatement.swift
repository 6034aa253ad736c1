/// Every statement ``SQLiteWriter`` runs inside a write transaction, kept prepared on its connection.
///
/// ```swift
/// try connection.run(.deleteItem, .blob(lookup))
/// ```
enum SQLiteWriteStatement: Int, SQLiteStatementSet {
    case begin, commit, rollBack
    case header, setHeader
    case generation, setState
    case clearEntries, setEntry, deleteEntry
    case itemExists, putItem, deleteItem, deleteExpired
    case appliedMigrations, recordMigration

    var sql: String {
        switch self {
        // IMMEDIATE: the write lock is taken at BEGIN, so a transaction never fails half-way for
        // want of it.
        case .begin: "BEGIN IMMEDIATE"
        case .commit: "COMMIT"
        case .rollBack: "ROLLBACK"
        case .header: "SELECT body FROM vault_header WHERE id = 1"
        case .setHeader: "INSERT OR REPLACE INTO vault_header (id, body) VALUES (1, ?)"
        case .generation: "SELECT generation FROM vault_state WHERE id = 1"
        case .setState: "INSERT OR REPLACE INTO vault_state (id, vault_id, generation, count, tag) VALUES (1, ?, ?, ?, ?)"
        case .clearEntries: "DELETE FROM vault_entries"
        case .setEntry: "INSERT OR REPLACE INTO vault_entries (lookup, revision, expires_at) VALUES (?, ?, ?)"
        case .deleteEntry: "DELETE FROM vault_entries WHERE lookup = ?"
        case .itemExists: "SELECT 1 FROM items WHERE lookup = ?"
        case .putItem: """
            INSERT INTO items (lookup, revision, expires_at, metadata, secret) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (lookup) DO UPDATE SET revision = excluded.revision, expires_at = excluded.expires_at,
                metadata = excluded.metadata, secret = excluded.secret
            """
        case .deleteItem: "DELETE FROM items WHERE lookup = ?"
        case .deleteExpired: "DELETE FROM items WHERE expires_at IS NOT NULL AND expires_at <= ?"
        case .appliedMigrations: "SELECT identifier FROM grdb_migrations"
        case .recordMigration: "INSERT INTO grdb_migrations (identifier) VALUES (?)"
        }
    }
}
