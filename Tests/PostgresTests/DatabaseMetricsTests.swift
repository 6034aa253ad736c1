import Foundation
import MetricsTestKit
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// The fleet store's database latency through swift-metrics, read back with TestMetrics.
    @Suite struct DatabaseMetricsTests {
        @Test func everyDatabaseCallIsTimedByKindAndResult() async throws {
            let database = try FleetDatabase.fresh()
            let metrics = TestMetrics()
            try await database.withClient { client in
                let store = try await PostgresTokenStore.open(client: client, masterKey: masterKey(), clock: ManualClock(),
                                                              callDeadline: .seconds(300), metrics: metrics)
                let item = try ItemKey(service: "s", account: "a")
                try await store.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                _ = try await store.retrieve(item)
                _ = try await database.sql("DROP TABLE sortedvault_outbox")
                await #expect(throws: (any Error).self) { try await store.claimDueRevocations(limit: 1, for: 60) }
            }
            let label = "sortedvault_database_call_seconds"
            #expect(metrics.timers(label: label, dimensions: [("kind", "transaction"), ("result", "ok")]).first?.values.isEmpty == false)
            #expect(metrics.timers(label: label, dimensions: [("kind", "query"), ("result", "ok")]).first?.values.isEmpty == false)
            #expect(metrics.timers(label: label, dimensions: [("kind", "query"), ("result", "error")]).first?.values.count == 1)
        }
    }
}
