import Foundation
import GRDB
import Vault
import VaultCore

/// The fast path's reads (one prepared statement on the read connection) and group commit (several
/// rows, one state change, one transaction, one fsync).
extension SQLiteSealedStorage: SealedStorageReadingNow, SealedStorageGroupWrites {
    /// One statement, so one snapshot: the state row joined with the item row (absent when no item),
    /// read on the ``ItemPointReader``'s connection.
    public func readNow(lookup: [UInt8]) throws -> (state: SealedVaultState?, record: SealedRecord?) {
        try pointReader.read(lookup: lookup)
    }

    public func listNow() throws -> (state: SealedVaultState?, records: [SealedRecord]) {
        try readNow("list items") { db in
            var result: (state: SealedVaultState?, records: [SealedRecord]) = (nil, [])
            try db.inTransaction(.deferred) {
                let state = try db.cachedStatement(sql: "SELECT vault_id, generation, count, tag FROM vault_state WHERE id = 1")
                result.state = try Row.fetchOne(state).map(Self.state(from:))
                let items = try db.cachedStatement(sql: "SELECT lookup, revision, expires_at, metadata FROM items ORDER BY id")
                result.records = try Row.fetchAll(items).map { try Self.record(from: $0, withSecret: false) }
                return .commit
            }
            return result
        }
    }

    public func put(group records: [SealedRecord], state: SealedVaultState, expected: UInt64?) async throws {
        try await access("store items") { db in
            var replaced = false
            try db.inTransaction(.immediate) {
                try Self.replaceState(db, state, expected: expected)
                for record in records {
                    try Self.setEntry(db, lookup: record.lookup, revision: record.revision, expiresAt: record.expiresAt?.timeIntervalSince1970)
                    if try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM items WHERE lookup = ?"), arguments: [Data(record.lookup)]) ?? false {
                        replaced = true
                    }
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

    /// The state from the first four columns of `row` (vault_id, generation, count, tag).
    static func state(from row: Row) -> SealedVaultState {
        SealedVaultState(vaultID: Array(row[0] as Data), generation: UInt64(bitPattern: row[1] as Int64),
                         count: UInt64(bitPattern: row[2] as Int64), tag: Array(row[3] as Data))
    }
}
