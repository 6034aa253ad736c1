import Logging
import PostgresNIO

/// The fleet's tables, as numbered migrations. Whichever daemon starts first applies the missing
/// ones, all in one transaction under a transaction-scoped advisory lock: daemons starting together
/// queue on the lock, and each later one finds the work done. A lock held by a session (not a
/// transaction) would outlive a daemon that dies while holding its pooled connection.
///
/// Append migrations; never edit one that has shipped.
enum FleetSchema {
    /// `pg_advisory_xact_lock` key of schema and key set-up: "sortedva" as a big-endian integer.
    static let migrationLock: Int64 = 0x736F_7274_6564_7661
    /// The advisory lock that keeps two rewraps from adding keys at once.
    static let rewrapLock: Int64 = migrationLock + 1

    static let migrations: [(version: Int32, statements: [PostgresQuery])] = [
        (1, [
            """
            CREATE TABLE sortedvault_keys (
                key_id integer PRIMARY KEY,
                purpose text NOT NULL CHECK (purpose IN ('lookup', 'data')),
                state text NOT NULL CHECK (state IN ('active', 'retired')),
                wrapped bytea NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now())
            """,
            // One lookup key for the fleet's life: every row's identity is a keyed hash under it.
            "CREATE UNIQUE INDEX sortedvault_keys_one_lookup ON sortedvault_keys (purpose) WHERE purpose = 'lookup'",
            // Generations come from one sequence, so a row deleted and stored again never reuses one.
            "CREATE SEQUENCE sortedvault_generation",
            """
            CREATE TABLE sortedvault_items (
                lookup bytea PRIMARY KEY CHECK (octet_length(lookup) = 32),
                generation bigint NOT NULL,
                key_id integer NOT NULL REFERENCES sortedvault_keys (key_id),
                expires_at timestamptz,
                sealed_metadata bytea NOT NULL,
                sealed_secret bytea NOT NULL,
                version bigint NOT NULL DEFAULT 1,
                lease_owner text,
                lease_expires_at timestamptz,
                lease_generation bigint NOT NULL DEFAULT 0,
                refresh_in_doubt smallint NOT NULL DEFAULT 0)
            """,
            "CREATE INDEX sortedvault_items_expiry ON sortedvault_items (expires_at) WHERE expires_at IS NOT NULL",
            "CREATE INDEX sortedvault_items_key ON sortedvault_items (key_id)",
            """
            CREATE TABLE sortedvault_outbox (
                id bigserial PRIMARY KEY,
                lookup bytea NOT NULL,
                key_id integer NOT NULL REFERENCES sortedvault_keys (key_id),
                sealed_payload bytea NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL DEFAULT now(),
                last_error text)
            """,
        ]),
        (2, [
            // The outbox in use: when an entry was queued (the backlog's age), when its tokens are
            // dead anyway (it may go then), and the number of its latest claim, which fences the
            // failure report of a claimer that was overtaken.
            """
            ALTER TABLE sortedvault_outbox
                ADD COLUMN queued_at timestamptz NOT NULL DEFAULT now(),
                ADD COLUMN discard_after timestamptz,
                ADD COLUMN claim bigint NOT NULL DEFAULT 0
            """,
            "CREATE INDEX sortedvault_outbox_due ON sortedvault_outbox (next_attempt_at)",
            "CREATE INDEX sortedvault_outbox_key ON sortedvault_outbox (key_id)",
        ]),
        (3, [
            // When a login is due for its proactive refresh (written with the login by the daemon
            // that writes it; NULL: never), so any daemon claims due logins, whoever wrote them.
            "ALTER TABLE sortedvault_items ADD COLUMN refresh_due_at timestamptz",
            "CREATE INDEX sortedvault_items_refresh_due ON sortedvault_items (refresh_due_at) WHERE refresh_due_at IS NOT NULL",
        ]),
        (4, [
            // Whether the lease's holder recorded its provider request: only such a lease that runs
            // out is a lost answer. True for the rows already there: a lease a daemon of the version
            // before holds may have sent its request (and that daemon cannot start on this schema).
            "ALTER TABLE sortedvault_items ADD COLUMN lease_sent boolean NOT NULL DEFAULT true",
        ]),
    ]

    static var currentVersion: Int32 { migrations.last!.version }

    /// Applies the missing migrations on `connection`, which must be inside a transaction.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        // Daemons starting together wait here for the first one's migration, which may take longer
        // than the connection's lock_timeout (meant for row locks) and statement_timeout (the wait
        // counts as the statement's time) on a loaded server: both are raised to at least 60 s for
        // this transaction, never lowered (0, no limit, stays); the call deadline still bounds the
        // whole opening.
        for setting in ["lock_timeout", "statement_timeout"] {
            try await connection.query("""
                SELECT set_config(\(setting), CASE
                    WHEN current_setting(\(setting))::interval = interval '0'
                      OR current_setting(\(setting))::interval >= interval '60s' THEN current_setting(\(setting))
                    ELSE '60s' END, true)
                """, logger: logger).collect()
        }
        try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger).collect()
        try await connection.query(
            "CREATE TABLE IF NOT EXISTS sortedvault_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
            logger: logger)
        var applied: Int32 = 0
        for try await version in try await connection.query("SELECT coalesce(max(version), 0) FROM sortedvault_schema", logger: logger)
            .decode(Int32.self) { applied = version }
        guard applied <= currentVersion else {
            throw VaultErrorText.newerSchema(applied, known: currentVersion)
        }
        for migration in migrations where migration.version > applied {
            for statement in migration.statements { try await connection.query(statement, logger: logger) }
            try await connection.query("INSERT INTO sortedvault_schema (version) VALUES (\(migration.version))", logger: logger)
        }
    }
}
