import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import PostgresNIO
import VaultCore

/// What `sortedvault fleet status` shows of the database: the numbers come from the rows' clear
/// columns (lease state, key ids), so nothing is opened.
extension PostgresTokenStore: DataKeyReporting {
    public func loginsInDoubt() async throws -> Int {
        let rows = try await connection { connection, logger in
            try await connection.query("""
                SELECT count(*) FROM sortedvault_items
                WHERE refresh_in_doubt > 0 OR (lease_generation <> 0 AND lease_sent AND lease_expires_at <= now())
                """, logger: logger).collect()
        }
        return Int(try rows.first?.decode(Int64.self) ?? 0)
    }

    public func dataKeysInUse() async throws -> [DataKeyUse] {
        let rows = try await connection { connection, logger in
            try await connection.query("""
                SELECT key_id, count(*) FROM (SELECT key_id FROM sortedvault_items UNION ALL SELECT key_id FROM sortedvault_outbox) AS sealed
                GROUP BY key_id ORDER BY key_id
                """, logger: logger).collect()
        }
        return try rows.map { row in
            let (id, count) = try row.decode((Int32, Int64).self)
            return DataKeyUse(id: Int(id), rows: Int(count))
        }
    }

    public func rewrapDataKeys(batchSize: Int) async throws -> DataKeyRewrap {
        let report = try await rewrap(batchSize: batchSize)
        return DataKeyRewrap(keyID: Int(report.keyID), rows: report.rows, retiredKeyIDs: report.retiredKeyIDs.map(Int.init))
    }
}
