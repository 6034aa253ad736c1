import CoreMetrics
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import Vault
import VaultCore
import VaultCrypto

/// A ``TokenStore`` in PostgreSQL, shared by the daemons of a fleet (docs/fleet.md).
///
/// ```swift
/// let client = PostgresClient(configuration: try settings.clientConfiguration())
/// Task { await client.run() }                       // or as a Service in the daemon's ServiceGroup
/// let store = try await PostgresTokenStore.open(client: client, masterKey: master, clock: SystemClock(),
///                                               callDeadline: settings.callDeadline)
/// ```
///
/// Rows are sealed here, above the database: it sees a keyed hash of each item's names, the clear
/// expiry (so it can purge), and ciphertext bound to the row ([RowSeal]). A row that fails its
/// integrity check is logged and counted ([IntegrityReport]); `list` leaves it out. Every call runs under a
/// deadline on `deadlineClock` and fails with `.unavailable` when the database does not answer in
/// time. The caller runs `client.run()` for as long as the store is used.
public final class PostgresTokenStore: TokenStore {
    let client: PostgresClient
    let keys: FleetKeyRing
    let clock: any VaultClock
    let deadline: DatabaseDeadline
    let logger: Logger
    let hints = ChangeHints()
    let metrics: DatabaseMetrics
    let integrity: IntegrityReport

    private init(client: PostgresClient, keys: FleetKeyRing, clock: any VaultClock, deadline: DatabaseDeadline, logger: Logger,
                 metrics: DatabaseMetrics) {
        self.client = client
        self.keys = keys
        self.clock = clock
        self.deadline = deadline
        self.logger = logger
        self.metrics = metrics
        self.integrity = IntegrityReport(logger: logger, metrics: metrics)
    }

    /// Brings the schema up to date, creates the fleet's keys if none exist (both under the migration
    /// lock), and loads the keys with `masterKey`, which must be the one the fleet's keys were wrapped with.
    /// Each call's latency, measured on `deadlineClock`, goes to `metrics` ([DatabaseMetrics]).
    public static func open(client: PostgresClient, masterKey: SecureBytes, clock: any VaultClock, callDeadline: Duration,
                            deadlineClock: any Clock<Duration> = ContinuousClock(), logger: Logger? = nil,
                            metrics: any MetricsFactory = MetricsSystem.factory) async throws -> PostgresTokenStore {
        var logger = logger ?? Logger(label: "sortedvault.postgres")
        // postgres-nio logs statements at debug level; they carry ciphertext and keyed hashes only,
        // but a log is no place for either.
        logger.logLevel = max(logger.logLevel, .info)
        let databaseMetrics = DatabaseMetrics(factory: metrics)
        let store = PostgresTokenStore(
            client: client, keys: try FleetKeyRing(master: masterKey, integrity: IntegrityReport(logger: logger, metrics: databaseMetrics)),
            clock: clock, deadline: DatabaseDeadline(clock: deadlineClock, limit: callDeadline), logger: logger,
            metrics: databaseMetrics)
        let keys = store.keys
        try await store.transaction { connection, logger in
            try await FleetSchema.migrate(connection, logger: logger)
            try await keys.createIfEmpty(connection, logger: logger)
            try await keys.sealRetirements(connection, logger: logger)
        }
        try await store.connection { connection, logger in try await keys.reload(connection, logger: logger) }
        return store
    }

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        _ = try await write(secret, for: key, options: options, fence: nil)
    }

    /// The one write path. With `fence`, the row is written only while its `lease_generation` is
    /// still `fence` (false otherwise, nothing written); without, the row is inserted or replaced.
    /// Either way the write ends any lease on the row and clears its in-doubt count: a plain store
    /// fences a holder (`lease_generation` 0 is never granted), and a fenced one is the holder's
    /// own result. It sets the row's due time (``DueRefreshes``) from `options` in the same statement.
    func write(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions, fence: Int64?) async throws -> Bool {
        try validateSecret(secret)
        let lookup = try keys.lookup(for: key)
        let now = clock.now
        let keys = keys
        return try await transaction { connection, logger in
            let (keyID, dataKey) = try await keys.activeDataKey(connection, logger: logger)
            var createdAt = now
            let existing = try await connection.query(
                "SELECT generation, key_id, sealed_metadata, lease_generation FROM sortedvault_items WHERE lookup = \(ByteBuffer(bytes: lookup)) FOR UPDATE",
                logger: logger).collect()
            if let fence {
                // Checked under the row lock, so no claim, store or delete can slip in before the write.
                guard let row = existing.first, try row.decode((Int64, Int32, ByteBuffer, Int64).self).3 == fence else { return false }
            }
            if let row = existing.first {
                let (generation, oldKeyID, sealed, _) = try row.decode((Int64, Int32, ByteBuffer, Int64).self)
                let identity = RowSeal.Identity(lookup: lookup, generation: generation, keyID: oldKeyID)
                // A replacement keeps the creation date; a row that no longer opens is simply replaced.
                if let oldKey = keys.dataKey(oldKeyID),
                   let old = try? SealedMetadata.decode(RowSeal.open(sealed, .metadata, identity, key: oldKey)),
                   old.key == key, !old.isExpired(at: now) {
                    createdAt = old.createdAt
                }
            }
            let generation = try await Self.nextGenerations(1, connection, logger: logger)[0]
            let identity = RowSeal.Identity(lookup: lookup, generation: generation, keyID: keyID)
            let metadata = ItemMetadata(key: key, label: options.label, attributes: options.attributes,
                                        createdAt: createdAt, modifiedAt: now, expiresAt: options.expiresAt)
            let sealedMetadata = try RowSeal.seal(SealedMetadata(metadata).encoded(), .metadata, identity, key: dataKey)
            let sealedSecret = try RowSeal.seal(secret, .secret, identity, key: dataKey)
            try await connection.query("""
                INSERT INTO sortedvault_items (lookup, generation, key_id, expires_at, sealed_metadata, sealed_secret, refresh_due_at)
                VALUES (\(ByteBuffer(bytes: lookup)), \(generation), \(keyID), \(options.expiresAt), \(sealedMetadata), \(sealedSecret),
                        \(options.refreshDueAt))
                ON CONFLICT (lookup) DO UPDATE SET generation = excluded.generation, key_id = excluded.key_id,
                    expires_at = excluded.expires_at, refresh_due_at = excluded.refresh_due_at, sealed_metadata = excluded.sealed_metadata,
                    sealed_secret = excluded.sealed_secret, version = sortedvault_items.version + 1,
                    lease_owner = NULL, lease_expires_at = NULL, lease_generation = 0, refresh_in_doubt = 0
                """, logger: logger)
            try await Self.announceChange(of: lookup, connection, logger: logger)
            return true
        }
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        let lookup = try keys.lookup(for: key)
        let rows = try await connection { connection, logger in
            try await connection.query(
                "SELECT generation, key_id, sealed_metadata, sealed_secret FROM sortedvault_items WHERE lookup = \(ByteBuffer(bytes: lookup))",
                logger: logger).collect()
        }
        guard let row = rows.first else { throw VaultError.notFound(key) }
        let (generation, keyID, sealedMetadata, sealedSecret) = try row.decode((Int64, Int32, ByteBuffer, ByteBuffer).self)
        let identity = RowSeal.Identity(lookup: lookup, generation: generation, keyID: keyID)
        let metadata: ItemMetadata, secret: SecureBytes
        do {
            let dataKey = try await dataKey(keyID)
            metadata = try SealedMetadata.decode(RowSeal.open(sealedMetadata, .metadata, identity, key: dataKey))
            guard metadata.key == key else { throw VaultErrorText.rowDoesNotOpen }
            secret = try RowSeal.open(sealedSecret, .secret, identity, key: dataKey)
        } catch let error as VaultError where error.code == .integrityFailure {
            integrity.failed("sortedvault_items", row: ChangeHints.hex(lookup), "the item it holds is not returned")
            throw error
        }
        if metadata.isExpired(at: clock.now) {
            try await purge(lookup: lookup, generation: generation)
            throw VaultError.notFound(key)
        }
        return RetrievedItem(metadata: metadata, secret: secret)
    }

    public func delete(_ key: ItemKey) async throws {
        let lookup = try keys.lookup(for: key)
        let rows = try await transaction { connection, logger in
            let rows = try await connection.query(
                "DELETE FROM sortedvault_items WHERE lookup = \(ByteBuffer(bytes: lookup)) RETURNING expires_at",
                logger: logger).collect()
            if !rows.isEmpty { try await Self.announceChange(of: lookup, connection, logger: logger) }
            return rows
        }
        guard let row = rows.first else { throw VaultError.notFound(key) }
        // An expired item was only purged: for the caller it was already gone.
        if let expiresAt = try row.decode(Date?.self), expiresAt <= clock.now { throw VaultError.notFound(key) }
    }

    public func list(service: String?) async throws -> [ItemMetadata] {
        let now = clock.now
        let rows = try await connection { connection, logger in
            try await connection.query("DELETE FROM sortedvault_items WHERE expires_at <= \(now)", logger: logger)
            return try await connection.query(
                "SELECT lookup, generation, key_id, sealed_metadata FROM sortedvault_items", logger: logger).collect()
        }
        var items: [ItemMetadata] = []
        for row in rows {
            let (lookup, generation, keyID, sealed) = try row.decode((ByteBuffer, Int64, Int32, ByteBuffer).self)
            let identity = RowSeal.Identity(lookup: Array(lookup.readableBytesView), generation: generation, keyID: keyID)
            let metadata: ItemMetadata
            do {
                metadata = try SealedMetadata.decode(RowSeal.open(sealed, .metadata, identity, key: try await dataKey(keyID)))
                guard try keys.lookup(for: metadata.key) == identity.lookup else { throw VaultErrorText.rowDoesNotOpen }
            } catch let error as VaultError where error.code == .integrityFailure {
                // One bad row must not hide every other item from every caller: it is left out, and reported.
                integrity.failed("sortedvault_items", row: ChangeHints.hex(identity.lookup), "it is left out of the list")
                continue
            }
            if metadata.isExpired(at: now) { continue }
            if let service, metadata.service != service { continue }
            items.append(metadata)
        }
        return items.sortedForListing()
    }

    // MARK: Change hints

    /// Listens for change hints on a connection of its own (`configuration`, from
    /// ``PostgresSettings/listenConfiguration()``) until the calling task is cancelled; run it for as
    /// long as the store is used. Without it, ``changes(of:)`` is nil and waiters look again by time.
    public func listenForChanges(_ configuration: PostgresConnection.Configuration) async {
        await hints.run(configuration, deadline: deadline, logger: logger)
    }

    /// How many times the listening connection was made: 1 once it listens, one more per reconnection.
    public var changeHintConnections: Int { hints.connections }

    // MARK: Database calls

    /// Runs `body` on a pooled connection, autocommit, under the deadline.
    func connection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        let client = client, logger = logger
        return try await metrics.timed("query", on: deadline.clock) {
            try await deadline.run { try await client.withConnection { try await body($0, logger) } }
        }
    }

    /// Runs `body` in one transaction under the deadline: committed when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        let client = client, logger = logger
        return try await metrics.timed("transaction", on: deadline.clock) {
            try await deadline.run { try await client.withTransaction(logger: logger) { try await body($0, logger) } }
        }
    }

    /// The data key `id`, loading the key table again when another daemon added it since.
    func dataKey(_ id: Int32) async throws -> SecureBytes {
        if let key = keys.dataKey(id) { return key }
        let keys = keys
        try await connection { connection, logger in try await keys.reload(connection, logger: logger) }
        guard let key = keys.dataKey(id) else { throw VaultErrorText.unknownKey(id) }
        return key
    }

    /// Sends the change hint of row `lookup` (``ChangeHints``); inside the change's transaction, so
    /// it is delivered only if, and once, the change is committed.
    ///
    /// Read to its end, as every statement that returns rows must be here: postgres-nio answers such
    /// a statement once it *starts*, and an error after that reaches only the reader of its rows —
    /// unread, the transaction is left aborted, so the next statement fails (25P02) or COMMIT
    /// quietly rolls back.
    static func announceChange(of lookup: [UInt8], _ connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("SELECT pg_notify(\(ChangeHints.channel), \(ChangeHints.hex(lookup)))", logger: logger).collect()
    }

    static func nextGenerations(_ count: Int, _ connection: PostgresConnection, logger: Logger) async throws -> [Int64] {
        try await connection.query("SELECT nextval('sortedvault_generation') FROM generate_series(1, \(count))", logger: logger)
            .collect().map { try $0.decode(Int64.self) }
    }

    /// Removes an expired row, unless it was replaced meanwhile.
    private func purge(lookup: [UInt8], generation: Int64) async throws {
        _ = try await connection { connection, logger in
            try await connection.query(
                "DELETE FROM sortedvault_items WHERE lookup = \(ByteBuffer(bytes: lookup)) AND generation = \(generation)",
                logger: logger)
        }
    }
}
