import Foundation
import PostgresNIO
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// The ``LoginLeases`` guarantees on a real PostgreSQL, with two store instances (two pools) as
    /// two daemons of one fleet. Leases run out on the database's clock: the cases use short leases
    /// and ask the database whether its clock has passed them, never a bound on the test's time.
    @Suite struct LeaseTests {
        @Test("PostgreSQL fleet store keeps the lease guarantees", arguments: LoginLeasesConformance.cases)
        func postgresLeasesConform(_ check: LoginLeasesConformance.Case) async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withStore(master: master) { b in
                    try await check.run(.init(a: a, b: b, shortLease: 0.2) { try await database.waitUntilPast($0) })
                }
            }
        }

        @Test func claimingAMissingLoginSaysNotFound() async throws {
            let database = try FleetDatabase.fresh()
            let item = try ItemKey(service: "login", account: "ada")
            try await database.withStore(master: masterKey()) { a in
                await expectError(.notFound) { try await a.claimRefresh(of: item, owner: "a", duration: 600) }
                await expectError(.invalidArgument) { try await a.claimRefresh(of: item, owner: "a", duration: 0) }
                await expectError(.invalidArgument) { try await a.claimRefresh(of: item, owner: "", duration: 600) }
            }
        }
    }
}

extension FleetDatabase {
    /// Returns once the database's clock is past `date`; the hang guard only ends a broken run.
    func waitUntilPast(_ date: Date) async throws {
        for _ in 0..<1200 {
            let past = try await sql("SELECT clock_timestamp() > \(date)").first?.decode(Bool.self) ?? false
            if past { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the database's clock did not pass \(date) within the hang guard")
    }
}
