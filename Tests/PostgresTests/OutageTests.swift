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
            // While the server is stopped the pool queues calls until it has failed to connect for a
            // minute, so each call below waits out the deadline: a short one keeps the outage short, and
            // with it the pool's backoff after the start. Calls that fail are what this test expects.
            settings.callDeadline = .seconds(3)
            try await database.withStore(master: masterKey(), settings: settings) { store in
                try await store.store(SecureBytes(copying: [7]), service: "outage", account: "a")
                try server.shutDown()
                await expectError(.unavailable) { try await store.retrieve(service: "outage", account: "a") }
                await expectError(.unavailable) { try await store.store(SecureBytes(copying: [8]), service: "outage", account: "b") }
                try server.startUp()
                // The pool reconnects after its own backoff (about a quarter of the outage so far, at most
                // a minute): ask again until it has, for longer than that cap.
                var item: RetrievedItem?
                for _ in 0..<180 where item == nil {
                    item = try? await store.retrieve(service: "outage", account: "a")
                    if item == nil { try await Task.sleep(for: .milliseconds(500)) }
                }
                #expect(item?.secret.constantTimeEquals([7]) == true)
            }
        }
    }
}
