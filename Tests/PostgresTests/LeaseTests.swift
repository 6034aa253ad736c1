import Foundation
import PostgresNIO
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// The ``LoginLeases`` guarantees on a real PostgreSQL, with two store instances (two pools) as
    /// two daemons of one fleet. Leases run out on the database's clock: the cases' leases last a
    /// minute, far longer than any step on a busy machine, and the database is told to end them
    /// (``FleetDatabase/runLeasesOut(through:)``), never waited for.
    @Suite struct LeaseTests {
        @Test("PostgreSQL fleet store keeps the lease guarantees", arguments: LoginLeasesConformance.cases)
        func postgresLeasesConform(_ check: LoginLeasesConformance.Case) async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withStore(master: master) { b in
                    try await check.run(.init(a: a, b: b, shortLease: 60) { try await database.runLeasesOut(through: $0) })
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
    /// Ends, on the database's clock, every lease that would run out by `date`, as if that clock had
    /// passed it; later leases stay live. A lease is over when `lease_expires_at <= now()`.
    func runLeasesOut(through date: Date) async throws {
        _ = try await sql("""
            UPDATE sortedvault_items SET lease_expires_at = now()
            WHERE lease_generation <> 0 AND lease_expires_at <= \(date)
            """)
    }

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
