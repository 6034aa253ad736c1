import Foundation
import PostgresNIO
import Testing
import VaultCrypto
@testable import VaultPostgres

extension PostgresSuite {
    /// A daemon that starts while another one migrates waits for it, however long the migration
    /// takes compared with the connection's statement_timeout (the call deadline bounds the wait).
    @Suite struct MigrationWaitTests {
        @Test func aStartWaitsOutAMigrationLongerThanTheStatementTimeout() async throws {
            let database = try FleetDatabase.fresh()
            var settings = database.settings
            settings.statementTimeout = .milliseconds(300)
            // Real time and not what this test checks: far beyond any call on a loaded machine (a
            // full run beside two CPU hogs met 60 s).
            settings.callDeadline = .seconds(600)
            let (held, holding) = AsyncStream<Void>.makeStream()
            let logger = Logger(label: "test")
            try await database.withClient { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // Another daemon's migration: the lock, held until the start below has waited
                    // several statement timeouts for it.
                    group.addTask {
                        try await client.withTransaction(logger: logger) { connection in
                            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(FleetSchema.migrationLock))", logger: logger).collect()
                            holding.yield()
                            // Until the start waits for the lock; a start that never takes it fails
                            // here, by name, instead of leaving this loop to run for ever.
                            let giveUp = ContinuousClock.now + .seconds(600)
                            while try await connection.query(
                                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", logger: logger).collect()
                                .first?.decode(Int64.self) == 0 {
                                guard ContinuousClock.now < giveUp else {
                                    Issue.record("no start waited for the migration lock within 600 s")
                                    return
                                }
                                try await Task.sleep(for: .milliseconds(20))
                            }
                            try await Task.sleep(for: .seconds(1))
                        }
                    }
                    for await _ in held { break }
                    try await database.withStore(master: masterKey(), settings: settings) { store in
                        try await store.store(SecureBytes(copying: [7]), service: "start", account: "late")
                        #expect(try await store.retrieve(service: "start", account: "late").secret.constantTimeEquals([7]))
                    }
                    try await group.waitForAll()
                }
            }
        }
    }
}
