import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import Vault
import VaultCore
import VaultCrypto

/// The fleet's proactive-refresh schedule in the item's own row (docs/fleet.md): `refresh_due_at`,
/// written by ``write(_:for:options:fence:)`` with the login, and claimed by any daemon with one
/// autocommit `UPDATE … WHERE lookup IN (SELECT … FOR UPDATE SKIP LOCKED) RETURNING`, the outbox's
/// shape, which takes each claimed row's refresh lease as ``claimRefresh(of:owner:duration:)`` does.
///
/// Due times are compared with the daemon's clock, the one they were computed on (from the token's
/// expiry, as `expires_at` is); leases run out on the database's `now()`, as every lease does.
extension PostgresTokenStore: DueRefreshes {
    public func claimDueRefreshes(limit: Int, owner: String, duration: TimeInterval) async throws -> [DueRefresh] {
        guard (1...1000).contains(limit), duration > 0, duration <= Self.longestLease else {
            throw VaultError.invalidArgument("a claim of due refreshes takes 1–1000 logins for more than 0 and at most \(Int(Self.longestLease)) seconds")
        }
        try Self.checkLeaseOwner(owner)
        let now = clock.now
        let rows = try await connection { connection, logger in
            // Rows another claim or a write has locked are skipped, not waited for; the outer WHERE
            // is checked again on the locked row, so a lease taken meanwhile is never taken twice.
            try await connection.query("""
                UPDATE sortedvault_items SET
                    refresh_in_doubt = least(refresh_in_doubt + CASE WHEN lease_generation <> 0 AND lease_sent THEN 1 ELSE 0 END, 32767),
                    lease_sent = false,
                    lease_generation = nextval('sortedvault_generation'),
                    lease_owner = \(owner),
                    lease_expires_at = now() + make_interval(secs => \(duration))
                WHERE lookup IN (SELECT lookup FROM sortedvault_items
                                 WHERE refresh_due_at <= \(now) AND (expires_at IS NULL OR expires_at > \(now))
                                   AND (lease_generation = 0 OR lease_expires_at <= now())
                                 ORDER BY refresh_due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                  AND (lease_generation = 0 OR lease_expires_at <= now())
                RETURNING lookup, generation, key_id, sealed_metadata, lease_generation, lease_expires_at, refresh_in_doubt
                """, logger: logger).collect()
        }
        var claimed: [DueRefresh] = []
        for row in rows {
            let (lookup, generation, keyID, sealed, leaseGeneration, expiresAt, lost) =
                try row.decode((ByteBuffer, Int64, Int32, ByteBuffer, Int64, Date, Int16).self)
            let identity = RowSeal.Identity(lookup: Array(lookup.readableBytesView), generation: generation, keyID: keyID)
            do {
                let metadata = try SealedMetadata.decode(RowSeal.open(sealed, .metadata, identity, key: try await dataKey(keyID)))
                guard try keys.lookup(for: metadata.key) == identity.lookup else { throw VaultErrorText.rowDoesNotOpen }
                let lease = RefreshLease(item: metadata.key, owner: owner, generation: UInt64(leaseGeneration), expiresAt: expiresAt)
                claimed.append(DueRefresh(lease: lease, answersLost: Int(lost)))
            } catch {
                try await setAside(lookup, identity, leaseGeneration: leaseGeneration, error)
            }
        }
        return claimed
    }

    /// No daemon can refresh a claimed row that does not open: it is due never, and its lease is given back.
    private func setAside(_ lookup: ByteBuffer, _ identity: RowSeal.Identity, leaseGeneration: Int64, _ error: any Error) async throws {
        if let error = error as? VaultError, error.code == .integrityFailure {
            integrity.failed("sortedvault_items", row: ChangeHints.hex(identity.lookup), "the login it holds is not refreshed ahead of time")
        } else {
            logger.error("a login's row does not open; it is not refreshed ahead of time", metadata: ["error": "\(error)"])
        }
        _ = try await connection { connection, logger in
            try await connection.query("""
                UPDATE sortedvault_items SET refresh_due_at = NULL, lease_generation = 0, lease_owner = NULL, lease_expires_at = NULL
                WHERE lookup = \(lookup) AND lease_generation = \(leaseGeneration)
                """, logger: logger)
        }
    }

    public func postponeRefresh(_ lease: RefreshLease, until date: Date) async throws {
        guard let fence = Int64(exactly: lease.generation), fence != 0 else { return }
        let lookup = ByteBuffer(bytes: try keys.lookup(for: lease.item))
        _ = try await connection { connection, logger in
            try await connection.query("""
                UPDATE sortedvault_items SET refresh_due_at = greatest(refresh_due_at, \(date))
                WHERE lookup = \(lookup) AND lease_generation = \(fence) AND refresh_due_at IS NOT NULL
                """, logger: logger)
        }
    }

    public func earliestRefreshDue() async throws -> Date? {
        let now = clock.now
        let rows = try await connection { connection, logger in
            try await connection.query("""
                SELECT min(refresh_due_at) FROM sortedvault_items
                WHERE refresh_due_at IS NOT NULL AND (expires_at IS NULL OR expires_at > \(now))
                  AND (lease_generation = 0 OR lease_expires_at <= now())
                """, logger: logger).collect()
        }
        return try rows.first?.decode(Date?.self)
    }

    /// Nothing to do: due times are written with the rows.
    public func restoreRefreshDue(_ date: Date?, of item: ItemKey, itemExpiresAt: Date?) async throws {}

    public var dueRefreshesAreShared: Bool { true }
}
