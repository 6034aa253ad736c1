import Logging
import PostgresNIO
import Testing
import TestSupport

/// One row of `sortedvault_items` locked `FOR UPDATE` in an open transaction, as a writer
/// mid-commit holds it: a rewrap's `FOR UPDATE SKIP LOCKED` batches pass it by and its key cannot
/// be retired, so the rewrap stays in progress, every other row moved, until the transaction ends.
/// Plain reads of the row are not held up (MVCC).
enum HeldRow {
    /// Locks the oldest row (the first stored; a test stores plain items before it signs in, so no
    /// refresh writes it), runs `body` with the holding connection, then rolls back. The connection
    /// can still read while the lock is held: a transaction that holds a lock on a table is not queued
    /// behind another's waiting request for it.
    static func holding<T: Sendable>(in database: FleetDatabase, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let logger = Logger(label: "held-row")
        return try await database.withClient { client in
            try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                do {
                    let locked = try await connection.query(
                        "SELECT lookup FROM sortedvault_items ORDER BY generation LIMIT 1 FOR UPDATE", logger: logger).collect()
                    guard locked.count == 1 else { throw HarnessError("no row to hold: the store is empty") }
                    let result = try await body(connection)
                    try await connection.query("ROLLBACK", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        }
    }

    /// The rows under each data key, by key id, as `connection` sees them now.
    static func rowsByKey(_ connection: PostgresConnection) async throws -> [Int: Int] {
        let rows = try await connection.query("SELECT key_id, count(*) FROM sortedvault_items GROUP BY key_id",
                                              logger: Logger(label: "held-row")).collect()
        var counts: [Int: Int] = [:]
        for row in rows {
            let (id, count) = try row.decode((Int32, Int64).self)
            counts[Int(id)] = Int(count)
        }
        return counts
    }

    /// Whether data key `id` is still active (not retired), as `connection` sees it now.
    static func isActive(_ id: Int, _ connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("SELECT state FROM sortedvault_keys WHERE purpose = 'data' AND key_id = \(Int32(id))",
                                              logger: Logger(label: "held-row")).collect()
        return try rows.first?.decode(String.self) == "active"
    }
}
