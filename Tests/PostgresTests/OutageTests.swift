import Foundation
import Testing
import TestSupport
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// A database that goes away gives a clear error within the call deadline, never a hang, and
    /// the store works again once the database is back.
    @Suite struct OutageTests {
        @Test func aStoppedDatabaseFailsCallsWithUnavailableAndTheStoreRecoversAfterStart() async throws {
            let server = try PostgresServer.start()   // its own server: this test stops it
            defer { server.stop() }
            let database = FleetDatabase(server: server, name: try server.createDatabase())
            var settings = database.settings
            // Long enough for a loaded machine: a stopped server refuses connections at once, and the deadline itself is checked on a manual clock (DatabaseDeadlineTests).
            settings.callDeadline = .seconds(30)
            try await database.withStore(master: masterKey(), settings: settings) { store in
                try await store.store(SecureBytes(copying: [7]), service: "outage", account: "a")
                try server.shutDown()
                await expectError(.unavailable) { try await store.retrieve(service: "outage", account: "a") }
                await expectError(.unavailable) { try await store.store(SecureBytes(copying: [8]), service: "outage", account: "b") }
                try server.startUp()
                // The pool reconnects with a backoff of its own: a call may still fail just after the start.
                var item: RetrievedItem?
                for _ in 0..<30 where item == nil {
                    item = try? await store.retrieve(service: "outage", account: "a")
                }
                #expect(item?.secret.constantTimeEquals([7]) == true)
            }
        }
    }
}
