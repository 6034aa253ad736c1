import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import VaultCore
import VaultCrypto

/// The fleet's revocation outbox in `sortedvault_outbox` (docs/fleet.md): an entry is inserted in the
/// same transaction that deletes the login's row, and claimed by any daemon with one autocommit
/// `UPDATE … FOR UPDATE SKIP LOCKED` that pushes `next_attempt_at` on by the claim's length, on the
/// database's clock. Nothing is held while the provider is asked: a claimer that dies leaves only
/// entries whose `next_attempt_at` passes, and the next claim takes them.
///
/// Payloads are sealed as rows are ([RowSeal], part 4, bound to the entry's id, lookup, key id and
/// `discard_after`) and follow ``rewrap(batchSize:)`` to the new data key. An entry goes undelivered
/// only once its sealed discard time has passed.
extension PostgresTokenStore: RevocationOutbox {
    public func enqueueRevocation(_ payload: SecureBytes, for item: ItemKey, wiping: Bool, holdFor: TimeInterval,
                                  discardAfter: Date) async throws -> OutboxEntry {
        try validateSecret(payload)
        let lookup = try keys.lookup(for: item)
        let hold = max(0, holdFor)
        // Whole seconds: the value sealed is the one the database gives back.
        let discardAfter = Date(timeIntervalSince1970: discardAfter.timeIntervalSince1970.rounded(.down))
        let keys = keys
        return try await transaction { connection, logger in
            let (keyID, dataKey) = try await keys.activeDataKey(connection, logger: logger)
            let ids = try await connection.query(
                "SELECT nextval(pg_get_serial_sequence('sortedvault_outbox', 'id'))", logger: logger).collect()
            guard let id = try ids.first?.decode(Int64.self) else { throw VaultErrorText.outboxEntryDoesNotOpen }
            let sealed = try RowSeal.sealEntry(payload, id: id, lookup: lookup, keyID: keyID, discardAfter: discardAfter, key: dataKey)
            let claims = try await connection.query("""
                INSERT INTO sortedvault_outbox (id, lookup, key_id, sealed_payload, next_attempt_at, discard_after, claim)
                VALUES (\(id), \(ByteBuffer(bytes: lookup)), \(keyID), \(sealed), now() + make_interval(secs => \(hold)),
                        \(discardAfter), nextval('sortedvault_generation'))
                RETURNING claim
                """, logger: logger).collect()
            if wiping {
                let wiped = try await connection.query(
                    "DELETE FROM sortedvault_items WHERE lookup = \(ByteBuffer(bytes: lookup)) RETURNING generation", logger: logger).collect()
                if !wiped.isEmpty { try await Self.announceChange(of: lookup, connection, logger: logger) }
            }
            let claim = try claims.first?.decode(Int64.self) ?? 0
            return OutboxEntry(id: String(id), payload: payload, attempts: 0, claim: UInt64(claim))
        }
    }

    public func claimDueRevocations(limit: Int, for duration: TimeInterval) async throws -> [OutboxEntry] {
        guard (1...1000).contains(limit), duration > 0, duration <= Self.longestLease else {
            throw VaultError.invalidArgument("an outbox claim takes 1–1000 entries for more than 0 and at most \(Int(Self.longestLease)) seconds")
        }
        try await discardDeadEntries(now: clock.now)
        let rows = try await connection { connection, logger in
            try await connection.query("""
                UPDATE sortedvault_outbox SET next_attempt_at = now() + make_interval(secs => \(duration)),
                    claim = nextval('sortedvault_generation')
                WHERE id IN (SELECT id FROM sortedvault_outbox WHERE next_attempt_at <= now()
                             ORDER BY next_attempt_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING id, lookup, key_id, sealed_payload, attempts, claim, discard_after
                """, logger: logger).collect()
        }
        var entries: [OutboxEntry] = []
        for row in rows {
            let (id, lookup, keyID, sealed, attempts, claim, discardAfter) =
                try row.decode((Int64, ByteBuffer, Int32, ByteBuffer, Int32, Int64, Date?).self)
            do {
                let payload = try RowSeal.openEntry(sealed, id: id, lookup: Array(lookup.readableBytesView), keyID: keyID,
                                                    discardAfter: discardAfter, key: try await dataKey(keyID))
                entries.append(OutboxEntry(id: String(id), payload: payload, attempts: Int(attempts), claim: UInt64(claim)))
            } catch {
                // Kept and counted, never dropped unseen: an operator finds it stuck in `fleet status`.
                if let error = error as? VaultError, error.code == .integrityFailure {
                    integrity.failed("sortedvault_outbox", row: String(id), "the revocation it holds stays queued")
                } else {
                    logger.error("a revocation outbox entry does not open; it stays queued", metadata: ["entry": "\(id)"])
                }
                try await fail(id: id, claim: claim, retryIn: Self.longestLease, code: "payload does not open")
            }
        }
        return entries
    }

    /// Deletes the entries whose tokens are dead anyway (`discard_after` passed: revoking them does
    /// nothing) — each only once its seal confirms that discard time. An entry whose seal does not
    /// open with it had its `discard_after` changed by hand, to drop a revocation unseen: it is
    /// reported and kept, its discard time cleared, so it stays queued and counted in the backlog.
    private func discardDeadEntries(now: Date) async throws {
        let rows = try await connection { connection, logger in
            try await connection.query("""
                SELECT id, lookup, key_id, sealed_payload, discard_after FROM sortedvault_outbox
                WHERE discard_after <= \(now) ORDER BY id LIMIT 1000
                """, logger: logger).collect()
        }
        for row in rows {
            let (id, lookup, keyID, sealed, discardAfter) = try row.decode((Int64, ByteBuffer, Int32, ByteBuffer, Date).self)
            let genuine: Bool
            do {
                _ = try RowSeal.openEntry(sealed, id: id, lookup: Array(lookup.readableBytesView), keyID: keyID,
                                          discardAfter: discardAfter, key: try await dataKey(keyID))
                genuine = true
            } catch let error as VaultError where error.code == .integrityFailure {
                genuine = false
                integrity.failed("sortedvault_outbox", row: String(id), "its discard time is not the one sealed; the revocation stays queued")
            }
            _ = try await connection { connection, logger in
                if genuine {
                    try await connection.query(
                        "DELETE FROM sortedvault_outbox WHERE id = \(id) AND discard_after = \(discardAfter)", logger: logger)
                } else {
                    try await connection.query(
                        "UPDATE sortedvault_outbox SET discard_after = NULL WHERE id = \(id) AND discard_after = \(discardAfter)",
                        logger: logger)
                }
            }
        }
    }

    public func revocationDelivered(_ entry: OutboxEntry) async throws {
        guard let id = Int64(entry.id) else { return }
        _ = try await connection { connection, logger in
            try await connection.query("DELETE FROM sortedvault_outbox WHERE id = \(id)", logger: logger)
        }
    }

    public func revocationFailed(_ entry: OutboxEntry, retryIn: TimeInterval, code: String) async throws {
        guard let id = Int64(entry.id), let claim = Int64(exactly: entry.claim) else { return }
        try await fail(id: id, claim: claim, retryIn: retryIn, code: code)
    }

    private func fail(id: Int64, claim: Int64, retryIn: TimeInterval, code: String) async throws {
        let delay = min(max(0, retryIn), Self.longestLease)
        let code = String(code.prefix(64))
        _ = try await connection { connection, logger in
            try await connection.query("""
                UPDATE sortedvault_outbox SET attempts = least(attempts + 1, 1000000000),
                    next_attempt_at = now() + make_interval(secs => \(delay)), last_error = \(code)
                WHERE id = \(id) AND claim = \(claim)
                """, logger: logger)
        }
    }

    public func revocationBacklog(stuckAfter: Int) async throws -> RevocationBacklog {
        let now = clock.now
        let stuckAfter = Int64(clamping: stuckAfter)
        let rows = try await connection { connection, logger in
            try await connection.query("""
                SELECT count(*), count(*) FILTER (WHERE attempts >= \(stuckAfter)),
                    extract(epoch FROM now() - min(queued_at))::float8
                FROM sortedvault_outbox WHERE discard_after IS NULL OR discard_after > \(now)
                """, logger: logger).collect()
        }
        guard let row = rows.first else { return RevocationBacklog(pending: 0, stuck: 0, oldestAge: nil) }
        let (pending, stuck, age) = try row.decode((Int64, Int64, Double?).self)
        return RevocationBacklog(pending: Int(pending), stuck: Int(stuck), oldestAge: age.map { max(0, $0) })
    }

    /// None: an entry and its wipe are one transaction.
    public func revocationsToReconcile() async throws -> [OutboxEntry] { [] }

    public var outboxIsShared: Bool { true }
}
