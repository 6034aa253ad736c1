import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import VaultCore
import VaultCrypto

extension PostgresTokenStore {
    /// What a rewrap did.
    public struct RewrapReport: Sendable, Equatable {
        /// The data key every row is now sealed under.
        public let keyID: Int32
        /// Rows re-encrypted by this call.
        public let rows: Int
        /// Data keys retired by this call: no row uses them and none will.
        public let retiredKeyIDs: [Int32]
    }

    /// Re-encrypts every row under a new data key, online: adds the key as active (new writes use it
    /// at once), moves the rows over `batchSize` rows per transaction (`FOR UPDATE SKIP LOCKED`, so
    /// readers and writers never wait on more than one batch), then retires the older data keys once
    /// no row uses them. Readers keep working throughout: they open a row under whichever listed key
    /// it names.
    ///
    /// Retiring locks the old keys' rows first, which waits for any transaction still writing under
    /// them (writers hold their key `FOR SHARE`), so no row can appear under a retired key.
    public func rewrap(batchSize: Int) async throws -> RewrapReport {
        guard (1...10_000).contains(batchSize) else { throw VaultError.invalidArgument("the rewrap batch size \(batchSize) is not 1–10000") }
        let keys = keys
        let newKeyID = try await transaction { connection, logger -> Int32 in
            try await connection.query("SELECT pg_advisory_xact_lock(\(FleetSchema.rewrapLock))", logger: logger).collect()
            let rows = try await connection.query("SELECT max(key_id) FROM sortedvault_keys WHERE purpose = 'data'", logger: logger).collect()
            let id = (try rows.first?.decode(Int32?.self) ?? nil ?? 0) + 1
            try await keys.insert(id: id, purpose: "data", connection, logger: logger)
            return id
        }
        _ = try await dataKey(newKeyID)
        var moved = 0
        while true {
            let count = try await rewrapBatch(to: newKeyID, batchSize: batchSize)
            let entries = try await rewrapOutboxBatch(to: newKeyID, batchSize: batchSize)
            moved += count
            if count == batchSize || entries == batchSize { continue }
            if let retired = try await retireKeys(below: newKeyID) {
                return RewrapReport(keyID: newKeyID, rows: moved, retiredKeyIDs: retired)
            }
            // Rows still under an old key are locked by a writer or another batch: let them finish.
            try await deadline.pause(.milliseconds(20))
        }
    }

    /// Moves up to `batchSize` unlocked rows under an older key to `keyID`, in one transaction.
    private func rewrapBatch(to keyID: Int32, batchSize: Int) async throws -> Int {
        let newKey = try await dataKey(keyID)
        let oldKeys = try await openKeysBelow(keyID)
        return try await transaction { connection, logger -> Int in
            let rows = try await connection.query("""
                SELECT lookup, generation, key_id, sealed_metadata, sealed_secret FROM sortedvault_items
                WHERE key_id < \(keyID) ORDER BY lookup LIMIT \(batchSize) FOR UPDATE SKIP LOCKED
                """, logger: logger).collect()
            guard !rows.isEmpty else { return 0 }
            let generations = try await Self.nextGenerations(rows.count, connection, logger: logger)
            for (row, generation) in zip(rows, generations) {
                let (lookupBuffer, oldGeneration, oldKeyID, sealedMetadata, sealedSecret) =
                    try row.decode((ByteBuffer, Int64, Int32, ByteBuffer, ByteBuffer).self)
                let lookup = Array(lookupBuffer.readableBytesView)
                guard let oldKey = oldKeys[oldKeyID] else { throw VaultErrorText.unknownKey(oldKeyID) }
                let old = RowSeal.Identity(lookup: lookup, generation: oldGeneration, keyID: oldKeyID)
                let new = RowSeal.Identity(lookup: lookup, generation: generation, keyID: keyID)
                let metadata = try RowSeal.seal(RowSeal.open(sealedMetadata, .metadata, old, key: oldKey), .metadata, new, key: newKey)
                let secret = try RowSeal.seal(RowSeal.open(sealedSecret, .secret, old, key: oldKey), .secret, new, key: newKey)
                try await connection.query("""
                    UPDATE sortedvault_items SET generation = \(generation), key_id = \(keyID),
                        sealed_metadata = \(metadata), sealed_secret = \(secret)
                    WHERE lookup = \(lookupBuffer)
                    """, logger: logger)
            }
            return rows.count
        }
    }

    /// Moves up to `batchSize` unlocked outbox entries under an older key to `keyID`, in one
    /// transaction. An entry keeps its id (its identity); a claimer holding its payload is not
    /// disturbed.
    private func rewrapOutboxBatch(to keyID: Int32, batchSize: Int) async throws -> Int {
        let newKey = try await dataKey(keyID)
        let oldKeys = try await openKeysBelow(keyID)
        return try await transaction { connection, logger -> Int in
            let rows = try await connection.query("""
                SELECT id, lookup, key_id, sealed_payload, discard_after FROM sortedvault_outbox
                WHERE key_id < \(keyID) ORDER BY id LIMIT \(batchSize) FOR UPDATE SKIP LOCKED
                """, logger: logger).collect()
            for row in rows {
                let (id, lookupBuffer, oldKeyID, sealed, discardAfter) = try row.decode((Int64, ByteBuffer, Int32, ByteBuffer, Date?).self)
                let lookup = Array(lookupBuffer.readableBytesView)
                guard let oldKey = oldKeys[oldKeyID] else { throw VaultErrorText.unknownKey(oldKeyID) }
                let payload = try RowSeal.openEntry(sealed, id: id, lookup: lookup, keyID: oldKeyID, discardAfter: discardAfter, key: oldKey)
                let resealed = try RowSeal.sealEntry(payload, id: id, lookup: lookup, keyID: keyID, discardAfter: discardAfter, key: newKey)
                try await connection.query(
                    "UPDATE sortedvault_outbox SET key_id = \(keyID), sealed_payload = \(resealed) WHERE id = \(id)", logger: logger)
            }
            return rows.count
        }
    }

    /// Retires the active data keys below `keyID` when no row uses them; nil while some row still does.
    /// Each retirement is sealed into the key's wrap (``FleetKeyRing/retire(_:_:logger:)``).
    private func retireKeys(below keyID: Int32) async throws -> [Int32]? {
        let keys = keys
        return try await transaction { connection, logger -> [Int32]? in
            let locked = try await connection.query("""
                SELECT key_id FROM sortedvault_keys WHERE purpose = 'data' AND state = 'active' AND key_id < \(keyID) FOR UPDATE
                """, logger: logger).collect().map { try $0.decode(Int32.self) }
            let remaining = try await connection.query("""
                SELECT (SELECT count(*) FROM sortedvault_items WHERE key_id < \(keyID))
                     + (SELECT count(*) FROM sortedvault_outbox WHERE key_id < \(keyID))
                """, logger: logger).collect()
            guard try remaining.first?.decode(Int64.self) == 0 else { return nil }
            for id in locked { try await keys.retire(id, connection, logger: logger) }
            return locked.sorted()
        }
    }

    /// Every listed data key below `keyID`, loaded.
    private func openKeysBelow(_ keyID: Int32) async throws -> [Int32: SecureBytes] {
        let ids = try await connection { connection, logger in
            try await connection.query("SELECT key_id FROM sortedvault_keys WHERE purpose = 'data' AND key_id < \(keyID)", logger: logger)
                .collect().map { try $0.decode(Int32.self) }
        }
        var opened: [Int32: SecureBytes] = [:]
        for id in ids { opened[id] = try await dataKey(id) }
        return opened
    }
}
