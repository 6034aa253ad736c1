import Foundation
import PostgresNIO
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// The ``DueRefreshes`` guarantees on a real PostgreSQL, with two store instances (two pools) as
    /// two daemons of one fleet on one manual clock for due times; leases run out on the database's
    /// clock, which the cases ask rather than bound the test's time.
    @Suite struct DueRefreshTests {
        @Test("PostgreSQL fleet store keeps the due-refresh guarantees", arguments: DueRefreshesConformance.cases)
        func postgresDueRefreshesConform(_ check: DueRefreshesConformance.Case) async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            let clock = ManualClock()
            try await database.withStore(master: master, clock: clock) { a in
                try await database.withStore(master: master, clock: clock) { b in
                    try await check.run(.init(a: a, b: b, clock: clock, shortLease: 60) { try await database.runLeasesOut(through: $0) })
                }
            }
        }

        @Test func aLoginsDueTimeIsAPlainColumnOfItsRow() async throws {
            let database = try FleetDatabase.fresh()
            let clock = ManualClock()
            let due = clock.now.addingTimeInterval(3465)
            try await database.withStore(master: masterKey(), clock: clock) { store in
                try await store.store(SecureBytes(copying: [1]), for: try ItemKey(service: "login", account: "ada"),
                                      options: StoreOptions(refreshDueAt: due))
            }
            let rows = try await database.sql("SELECT refresh_due_at FROM sortedvault_items")
            #expect(try rows.map { try $0.decode(Date?.self) } == [due])
        }
    }
}
