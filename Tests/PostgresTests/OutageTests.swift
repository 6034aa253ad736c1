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
            // While the server is stopped the pool queues calls (until it has failed to connect for a
            // minute), so those calls end at the deadline. The deadline runs on a clock of the test's
            // that moves only while the server is stopped: no call made while it runs meets its
            // deadline, however busy the machine is.
            let sleeper = ManualSleepClock()
            let clock = ManualClock(mirror: sleeper.reach)
            var settings = database.settings
            settings.callDeadline = .seconds(3)
            try await database.withStore(master: masterKey(), clock: clock, settings: settings, deadlineClock: sleeper) { store in
                try await store.store(SecureBytes(copying: [7]), service: "outage", account: "a")
                try server.shutDown()
                let ticker = Task {
                    while !Task.isCancelled {
                        clock.advance(by: 4)
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                }
                await expectError(.unavailable) { try await hangGuard { try await store.retrieve(service: "outage", account: "a") } }
                await expectError(.unavailable) {
                    try await hangGuard { try await store.store(SecureBytes(copying: [8]), service: "outage", account: "b") }
                }
                ticker.cancel()
                _ = await ticker.value
                try server.startUp()
                // The pool reconnects after its own backoff (about a quarter of the outage so far, at most
                // a minute): ask again until it has, for longer than that cap.
                var item: RetrievedItem?
                for _ in 0..<180 where item == nil {
                    item = try? await hangGuard { try await store.retrieve(service: "outage", account: "a") }
                    if item == nil { try await Task.sleep(for: .milliseconds(500)) }
                }
                #expect(item?.secret.constantTimeEquals([7]) == true)
            }
        }
    }
}
