import Foundation
import PostgresNIO
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// The ``RevocationOutbox`` guarantees on a real PostgreSQL, with two store instances (two pools)
    /// as two daemons of one fleet, and what only a database can show: the entry and the wipe are
    /// one transaction, payloads are sealed to their entry, and they follow a rewrap.
    @Suite struct OutboxTests {
        static let login = try! ItemKey(service: "sortedvault/session/login", account: "ada")
        static let far = Date(timeIntervalSinceReferenceDate: 4_000_000_000)

        @Test("PostgreSQL fleet store keeps the outbox guarantees", arguments: RevocationOutboxConformance.cases)
        func postgresOutboxConforms(_ check: RevocationOutboxConformance.Case) async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withStore(master: master) { b in
                    try await check.run(.init(a: a, b: b, shortClaim: 0.2) { try await database.waitFromNow($0) })
                }
            }
        }

        /// A failure inside the transaction after the entry was inserted (the delete of the login
        /// fails) leaves neither: the login stays and no entry is queued.
        @Test func aFailedWipeQueuesNothing() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: [1]), for: Self.login, options: StoreOptions())
                _ = try await database.sql("""
                    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no'; END $$
                    """)
                _ = try await database.sql("CREATE TRIGGER refuse BEFORE DELETE ON sortedvault_items FOR EACH ROW EXECUTE FUNCTION refuse()")
                await #expect(throws: (any Error).self) {
                    try await store.enqueueRevocation(SecureBytes(copying: [2]), for: Self.login, wiping: true, holdFor: 0, discardAfter: Self.far)
                }
                #expect(try await database.sql("SELECT count(*) FROM sortedvault_outbox").first?.decode(Int64.self) == 0)
                #expect(try await store.retrieve(Self.login).secret.constantTimeEquals([1]))
            }
        }

        /// The connection killed while the transaction waits between the insert and the delete:
        /// the server rolls the whole transaction back, so neither the entry nor the wipe is there.
        @Test func aConnectionKilledMidTransactionLeavesTheLoginAndNoEntry() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: [1]), for: Self.login, options: StoreOptions())
                _ = try await database.sql("""
                    CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(60); RETURN OLD; END $$
                    """)
                _ = try await database.sql("CREATE TRIGGER stall BEFORE DELETE ON sortedvault_items FOR EACH ROW EXECUTE FUNCTION stall()")
                let logout = Task {
                    try await store.enqueueRevocation(SecureBytes(copying: [2]), for: Self.login, wiping: true, holdFor: 0, discardAfter: Self.far)
                }
                var killed = false
                for _ in 0..<1200 where !killed {
                    killed = try await database.sql("""
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = current_database() AND query LIKE 'DELETE FROM sortedvault_items%' AND pid <> pg_backend_pid()
                        """).first?.decode(Bool.self) ?? false
                    if !killed { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(killed, "the stalled delete never showed in pg_stat_activity")
                await #expect(throws: (any Error).self) { _ = try await logout.value }
                _ = try await database.sql("DROP TRIGGER stall ON sortedvault_items")
                #expect(try await database.sql("SELECT count(*) FROM sortedvault_outbox").first?.decode(Int64.self) == 0)
                #expect(try await store.retrieve(Self.login).secret.constantTimeEquals([1]))
            }
        }

        /// A payload moved to another entry does not open: that entry is not handed out, and stays
        /// queued and counted rather than dropped.
        @Test func aPayloadSwappedBetweenEntriesDoesNotOpenAndStaysCounted() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { store in
                let first = try await store.enqueueRevocation(SecureBytes(copying: Array("first".utf8)), for: Self.login, wiping: true,
                                                              holdFor: 0, discardAfter: Self.far)
                let second = try await store.enqueueRevocation(SecureBytes(copying: Array("second".utf8)), for: Self.login, wiping: true,
                                                               holdFor: 0, discardAfter: Self.far)
                _ = try await database.sql("""
                    UPDATE sortedvault_outbox SET sealed_payload = (SELECT sealed_payload FROM sortedvault_outbox WHERE id = \(Int64(first.id)!))
                    WHERE id = \(Int64(second.id)!)
                    """)
                let claimed = try await store.claimDueRevocations(limit: 10, for: 600)
                #expect(claimed.map(\.id) == [first.id])
                #expect(try await store.revocationBacklog(stuckAfter: 1) .stuck == 1)
                let rows = try await database.sql("SELECT last_error FROM sortedvault_outbox WHERE id = \(Int64(second.id)!)")
                #expect(try rows.first?.decode(String?.self) == "payload does not open")
            }
        }

        /// A queued revocation's tokens are not in the database in plaintext or hex.
        @Test func aDatabaseAdministratorSeesNoQueuedToken() async throws {
            let database = try FleetDatabase.fresh()
            let token = "refresh-token-outbox-51c2-SECRET"
            try await database.withStore(master: masterKey()) { store in
                _ = try await store.enqueueRevocation(SecureBytes(copying: Array(token.utf8)), for: Self.login, wiping: true,
                                                      holdFor: 0, discardAfter: Self.far)
            }
            var seen: [UInt8] = []
            for row in try await database.sql("SELECT row_to_json(t)::text FROM sortedvault_outbox t") {
                seen += Array(try row.decode(String.self).utf8)
            }
            for row in try await database.sql("SELECT lookup, sealed_payload FROM sortedvault_outbox") {
                let (lookup, payload) = try row.decode((ByteBuffer, ByteBuffer).self)
                seen += Array(lookup.readableBytesView) + Array(payload.readableBytesView)
            }
            #expect(seen.count > 100, "the entry was not read")
            let needle = Array(token.utf8), hex = Array(needle.map { String(format: "%02x", $0) }.joined().utf8)
            #expect(!contains(seen, needle) && !contains(seen, hex), "the database shows the queued token")
        }

        /// Rewrap moves queued payloads to the new key with the rows, and retires the old key.
        @Test func rewrapMovesQueuedPayloadsToTheNewKey() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { store in
                let sent = try await store.enqueueRevocation(SecureBytes(copying: Array("revoke".utf8)), for: Self.login, wiping: true,
                                                             holdFor: 0, discardAfter: Self.far)
                let report = try await store.rewrap(batchSize: 10)
                #expect(report.retiredKeyIDs == [1])
                #expect(try await database.sql("SELECT key_id FROM sortedvault_outbox").first?.decode(Int32.self) == report.keyID)
                let claimed = try await store.claimDueRevocations(limit: 10, for: 600)
                #expect(claimed.map(\.id) == [sent.id])
                #expect(claimed.first?.payload.constantTimeEquals(Array("revoke".utf8)) == true)
            }
        }
    }
}

extension FleetDatabase {
    /// Returns once the database's clock has moved `seconds` past this call; the hang guard only
    /// ends a broken run.
    func waitFromNow(_ seconds: TimeInterval) async throws {
        let start = try #require(try await sql("SELECT clock_timestamp()").first?.decode(Date.self))
        try await waitUntilPast(start.addingTimeInterval(seconds))
    }
}
