/// Every statement ``SQLiteReaders`` runs: a fixed set, so each connection keeps them prepared in
/// slots by number, and a read never hashes its SQL text to find them.
///
/// ```swift
/// let record = try reader.rows(.item, .blob(lookup)) { row in row.blob(0) }
/// ```
///
/// The columns each query returns are read by position in ``SQLiteSealedStorage``: change both together.
enum SQLiteReadStatement: Int, SQLiteStatementSet {
    case begin, commit, rollBack
    case header, item, state, entries, listings, snapshot, count

    var sql: String {
        switch self {
        case .begin: "BEGIN DEFERRED"
        case .commit: "COMMIT"
        case .rollBack: "ROLLBACK"
        case .header: "SELECT body FROM vault_header WHERE id = 1"
        case .item: "SELECT lookup, revision, expires_at, metadata, secret FROM items WHERE lookup = ?"
        case .state: "SELECT vault_id, generation, count, tag FROM vault_state WHERE id = 1"
        case .entries: "SELECT lookup, revision, expires_at FROM vault_entries"
        case .listings: "SELECT lookup, revision, expires_at, metadata FROM items ORDER BY id"
        case .snapshot: "SELECT lookup, revision, expires_at, metadata, secret FROM items ORDER BY id"
        case .count: "SELECT count(*) FROM items"
        }
    }
}
