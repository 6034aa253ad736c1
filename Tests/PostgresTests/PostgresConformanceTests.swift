import Testing
import VaultTesting

extension PostgresSuite {
    /// The one conformance suite, against the fleet store on a real PostgreSQL.
    @Suite struct ConformanceTests {
        @Test("PostgreSQL fleet store conforms", arguments: TokenStoreConformance.cases)
        func postgresStoreConforms(_ check: TokenStoreConformance.Case) async throws {
            let database = try FleetDatabase.fresh()
            let clock = ManualClock()
            try await database.withStore(master: masterKey(), clock: clock) { store in
                try await check.run(.init(store: store, clock: clock))
            }
        }
    }
}
