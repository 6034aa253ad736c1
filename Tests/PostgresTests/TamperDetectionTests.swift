import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import PostgresNIO
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultSession
import VaultTesting

extension PostgresSuite {
    /// What a database administrator changes by hand, and the store notices: a tampered row is left
    /// out of listings and reported (a log line naming the row, a counter), a revocation's discard
    /// time changed to drop it keeps it queued, and a retired data key set back to active is never
    /// written under again.
    @Suite struct TamperDetectionTests {
        static let failures = "sortedvault_integrity_failures_total"

        @Test func aTamperedRowIsLeftOutOfListsAndReported() async throws {
            let database = try FleetDatabase.fresh()
            let observed = Observed()
            let secret = "list-secret-5d1e"
            try await observed.withStore(database) { store in
                for account in ["first", "second", "third"] {
                    try await store.store(SecureBytes(copying: Array(secret.utf8)), service: "svc.tamper", account: account)
                }
                // The oldest row's metadata is replaced by its secret's ciphertext, as a DBA with UPDATE rights could.
                let rows = try await database.sql("SELECT lookup FROM sortedvault_items ORDER BY generation LIMIT 1")
                let lookup = try #require(rows.first).decode(ByteBuffer.self)
                _ = try await database.sql("UPDATE sortedvault_items SET sealed_metadata = sealed_secret WHERE lookup = \(lookup)")

                let listed = try await store.list(service: nil).map(\.key.account)
                #expect(listed == ["second", "third"])
                #expect(observed.metrics.counterTotal(label: Self.failures, dimensions: [("table", "sortedvault_items")]) == 1)
                let hex = Array(lookup.readableBytesView).map { String(format: "%02x", $0) }.joined()
                let lines = observed.lines
                #expect(lines.contains { $0.contains("integrity check") && $0.contains(hex) }, "no log line names the row: \(lines)")
                #expect(!lines.contains { $0.contains("svc.tamper") || $0.contains("first") || $0.contains(secret) }, "\(lines)")
            }
        }

        @Test func aTamperedLoginIsLeftOutOfTheSessionList() async throws {
            let database = try FleetDatabase.fresh()
            let observed = Observed()
            let provider = try OAuthProvider(tokenEndpoint: URL(string: "https://auth.example.test/oauth/token")!, clientID: "sorted")
            try await observed.withStore(database) { store in
                let sessions = try SessionManager(store: store, transport: ScriptedOAuthTransport([]), clock: ManualClock())
                for account in ["ada", "grace"] {
                    try await sessions.save(TokenResponse(accessToken: SecureBytes(copying: Array("A-\(account)".utf8)), expiresIn: 3600,
                                                          refreshToken: SecureBytes(copying: Array("R-\(account)".utf8))),
                                            provider: provider, for: try ItemKey(service: "com.sorted.api", account: account))
                }
                // The newest login's secret is swapped for the other's: its metadata still opens, its record does not.
                let rows = try await database.sql("SELECT lookup, sealed_secret FROM sortedvault_items ORDER BY generation")
                let (_, olderSecret) = try rows[0].decode((ByteBuffer, ByteBuffer).self)
                let (newer, _) = try rows[1].decode((ByteBuffer, ByteBuffer).self)
                _ = try await database.sql("UPDATE sortedvault_items SET sealed_secret = \(olderSecret) WHERE lookup = \(newer)")

                let listed = try await sessions.list().map(\.account)
                #expect(listed == ["ada"])
                #expect(observed.metrics.counterTotal(label: Self.failures, dimensions: [("table", "sortedvault_items")]) == 1)
            }
        }

        @Test func aDiscardTimeChangedByHandKeepsTheRevocationQueued() async throws {
            let database = try FleetDatabase.fresh()
            let observed = Observed()
            let clock = ManualClock()
            try await observed.withStore(database, clock: clock) { store in
                let item = try ItemKey(service: "svc", account: "a")
                let kept = try await store.enqueueRevocation(SecureBytes(copying: [1]), for: item, wiping: true, holdFor: 3600,
                                                             discardAfter: clock.now.addingTimeInterval(30 * 86400))
                // A genuine one whose tokens die before the next look goes, as it always did.
                _ = try await store.enqueueRevocation(SecureBytes(copying: [2]), for: item, wiping: true, holdFor: 3600,
                                                      discardAfter: clock.now.addingTimeInterval(10))
                clock.advance(by: 20)
                _ = try await database.sql("UPDATE sortedvault_outbox SET discard_after = '2001-01-01' WHERE id = \(Int64(kept.id)!)")

                #expect(try await store.claimDueRevocations(limit: 10, for: 60).isEmpty)
                let left = try await database.sql("SELECT id FROM sortedvault_outbox").map { try $0.decode(Int64.self) }
                #expect(left == [Int64(kept.id)!], "the tampered entry was dropped or the genuine one kept: \(left)")
                #expect(try await store.revocationBacklog(stuckAfter: 10).pending == 1)
                #expect(observed.metrics.counterTotal(label: Self.failures, dimensions: [("table", "sortedvault_outbox")]) == 1)
                #expect(observed.lines.contains { $0.contains("integrity check") && $0.contains("\"row\": \(kept.id)") },
                        "\(observed.lines)")
            }
        }

        @Test func aRetiredKeySetBackToActiveIsNeverWrittenUnder() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            let observed = Observed()
            try await observed.withStore(database, master: master) { store in
                try await store.store(SecureBytes(copying: [1]), service: "svc", account: "a")
                #expect(try await store.rewrap(batchSize: 10).retiredKeyIDs == [1])
                // Key 1 back to active, key 2 retired: a plain store would seal under key 1 again.
                _ = try await database.sql("UPDATE sortedvault_keys SET state = 'active' WHERE key_id = 1")
                _ = try await database.sql("UPDATE sortedvault_keys SET state = 'retired' WHERE key_id = 2")
                await expectError(.integrityFailure) { try await store.store(SecureBytes(copying: [2]), service: "svc", account: "b") }
                #expect(observed.metrics.counterTotal(label: Self.failures, dimensions: [("table", "sortedvault_keys")]) >= 1)
            }
            // A daemon started on that table reports it at once, reads, and still writes nothing under key 1.
            let restarted = Observed()
            try await restarted.withStore(database, master: master) { store in
                #expect(restarted.metrics.counterTotal(label: Self.failures, dimensions: [("table", "sortedvault_keys")]) >= 1)
                let item = try await store.retrieve(service: "svc", account: "a")
                #expect(item.secret.constantTimeEquals([1]))
                await expectError(.integrityFailure) { try await store.store(SecureBytes(copying: [3]), service: "svc", account: "c") }
            }
            let underKey1 = try await database.sql("SELECT count(*) FROM sortedvault_items WHERE key_id = 1")
            #expect(try underKey1[0].decode(Int64.self) == 0)
        }
    }
}

/// A store's metrics and log lines, captured (swift-log's `InMemoryLogHandler`).
final class Observed: Sendable {
    let metrics = TestMetrics()
    let log = InMemoryLogHandler()

    /// Every line logged so far: level, message and metadata.
    var lines: [String] { log.entries.map { "\($0.level) \($0.message) \($0.metadata)" } }

    func withStore<T: Sendable>(_ database: FleetDatabase, master: SecureBytes = masterKey(), clock: ManualClock = ManualClock(),
                                _ body: (PostgresTokenStore) async throws -> T) async throws -> T {
        var handler = log
        handler.logLevel = .trace
        return try await database.withClient { [handler] client in
            let store = try await PostgresTokenStore.open(
                client: client, masterKey: master, clock: clock, callDeadline: database.settings.callDeadline,
                logger: Logger(label: "test") { _ in handler }, metrics: metrics)
            return try await body(store)
        }
    }
}
