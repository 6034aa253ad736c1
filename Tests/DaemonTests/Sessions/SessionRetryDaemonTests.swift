import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultSession

extension DaemonSuite {
    /// "A client asking is never held back" — through the daemon, against the real provider.
    @Suite struct SessionRetryDaemonTests {
        @Test func whenTheProviderIsBackTheVeryNextAutoLoginIsRefreshed() async throws {
            let world = try SessionDaemonTests.World()
            defer { world.cli.stopDaemon() }
            try await world.signIn()
            world.clock.advance(by: 3600)
            world.provider.stop()
            // Three failures in a row: the background hold-back grows to 4–8 s.
            for wait in [2.1, 4.1, 1.5] {
                #expect(try await world.sessions.autoLogin(world.key).outcome == "offline")
                world.clock.advance(by: wait)
            }
            let held = try #require(try await world.sessions.status(world.key).retryNotBefore)
            #expect(held > world.clock.now, "the background work should still be held back")

            try world.provider.start()
            let result = try await world.sessions.autoLogin(world.key)
            #expect(result.outcome == "refreshed", "the first AutoLogin after the provider came back answered \(result.outcome)")
            #expect(try await world.provider.refreshRequests() == 1)
        }
    }
}
