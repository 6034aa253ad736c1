import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import VaultCore
import VaultCrypto

/// The refresh lease in the item's own row (docs/fleet.md): `lease_generation` fences (0: no lease,
/// never granted), `lease_owner` and `lease_expires_at` say who holds it until when on the
/// database's clock, `lease_sent` says its holder recorded its provider request, and
/// `refresh_in_doubt` counts the answers lost one after another. A lease is unresolved (its
/// holder's answer unknown) while `lease_generation` is not 0 and `lease_sent` is true.
///
/// Every step is one statement or one transaction; nothing is held between calls, so a daemon that
/// dies holding a lease leaves only a row that the next claim after `lease_expires_at` takes over.
/// Expiry is judged by the database's `now()`, the one clock every daemon of the fleet shares.
extension PostgresTokenStore: LoginLeases {
    public func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim {
        guard duration > 0, duration <= Self.longestLease else {
            throw VaultError.invalidArgument("a refresh lease must last longer than 0 and at most \(Int(Self.longestLease)) seconds")
        }
        try Self.checkLeaseOwner(owner)
        let lookup = ByteBuffer(bytes: try keys.lookup(for: item))
        // A lease released between the two statements below is free again: claim once more. Each
        // look sees a newer state, so the loop ends unless other daemons keep claiming and releasing.
        for _ in 0..<Self.claimAttempts {
            let claimed = try await connection { connection, logger in
                // One autocommit statement: the row lock orders concurrent claims, and the loser's
                // WHERE is re-checked against the winner's row, so it finds the lease live.
                try await connection.query("""
                    UPDATE sortedvault_items SET
                        refresh_in_doubt = least(refresh_in_doubt + CASE WHEN lease_generation <> 0 AND lease_sent THEN 1 ELSE 0 END, 32767),
                        lease_sent = false,
                        lease_generation = nextval('sortedvault_generation'),
                        lease_owner = \(owner),
                        lease_expires_at = now() + make_interval(secs => \(duration))
                    WHERE lookup = \(lookup) AND (lease_generation = 0 OR lease_expires_at <= now())
                    RETURNING lease_generation, lease_expires_at, refresh_in_doubt
                    """, logger: logger).collect()
            }
            if let row = claimed.first {
                let (generation, expiresAt, lost) = try row.decode((Int64, Date, Int16).self)
                let lease = RefreshLease(item: item, owner: owner, generation: UInt64(generation), expiresAt: expiresAt)
                return .granted(lease, answersLost: Int(lost))
            }
            let current = try await connection { connection, logger in
                try await connection.query("""
                    SELECT lease_generation, lease_owner, lease_expires_at, lease_expires_at > now()
                    FROM sortedvault_items WHERE lookup = \(lookup)
                    """, logger: logger).collect()
            }
            guard let row = current.first else { throw VaultError.notFound(item) }
            let (generation, holder, until, live) = try row.decode((Int64, String?, Date?, Bool?).self)
            if generation != 0, live == true, let holder, let until { return .held(owner: holder, until: until) }
        }
        throw VaultError(.unavailable, "the refresh lease of this login changed hands \(Self.claimAttempts) times during one claim; ask again")
    }

    public func recordRequest(under lease: RefreshLease) async throws -> Bool {
        guard let fence = Int64(exactly: lease.generation), fence != 0 else { return false }
        let lookup = ByteBuffer(bytes: try keys.lookup(for: lease.item))
        let recorded = try await connection { connection, logger in
            try await connection.query("""
                UPDATE sortedvault_items SET lease_sent = true
                WHERE lookup = \(lookup) AND lease_generation = \(fence)
                RETURNING lease_generation
                """, logger: logger).collect()
        }
        return !recorded.isEmpty
    }

    public func store(_ secret: SecureBytes, for item: ItemKey, options: StoreOptions, holding lease: RefreshLease) async throws -> Bool {
        guard item == lease.item else { throw VaultError.invalidArgument("the lease is for another item") }
        guard let fence = Int64(exactly: lease.generation), fence != 0 else { return false }
        return try await write(secret, for: item, options: options, fence: fence)
    }

    public func release(_ lease: RefreshLease, answerLost: Bool) async throws {
        guard let fence = Int64(exactly: lease.generation), fence != 0 else { return }
        let lookup = try keys.lookup(for: lease.item)
        try await transaction { connection, logger in
            let released = try await connection.query("""
                UPDATE sortedvault_items SET lease_generation = 0, lease_owner = NULL, lease_expires_at = NULL,
                    refresh_in_doubt = CASE WHEN \(answerLost) THEN least(refresh_in_doubt + 1, 32767) ELSE 0 END
                WHERE lookup = \(ByteBuffer(bytes: lookup)) AND lease_generation = \(fence)
                RETURNING lease_generation
                """, logger: logger).collect()
            // Waiters for the holder may claim now.
            if !released.isEmpty { try await Self.announceChange(of: lookup, connection, logger: logger) }
        }
    }

    /// Yields after the login's row may have changed (stored, deleted, its lease released); nil
    /// while ``listenForChanges(_:)`` does not run.
    public func changes(of item: ItemKey) async -> AsyncStream<Void>? {
        guard let lookup = try? keys.lookup(for: item) else { return nil }
        return hints.subscribe(lookup)
    }

    /// A lease owner is stored in `lease_owner` and shown to waiting daemons: 1–256 bytes of UTF-8.
    static func checkLeaseOwner(_ owner: String) throws {
        guard (1...256).contains(owner.utf8.count) else {
            throw VaultError.invalidArgument("a lease owner must be 1–256 bytes of UTF-8, not \(owner.utf8.count)")
        }
    }

    /// Longer than any provider request should take by far; it bounds how long a dead holder blocks a login.
    static let longestLease: TimeInterval = 24 * 3600
    static let claimAttempts = 5
}
