import Foundation
import TestSupport
import Testing
import Varlink
import VaultClient
import VaultCore
import VaultOAuthHTTP
@testable import VaultSession

extension DaemonSuite {
    /// Issue 9.4: a slow provider can neither stretch a refresh past its deadline nor hold a logout.
    @Suite struct SlowProviderTests {
        /// The provider sends its answer one byte every 2 s (60 s in all); URLSession's own timeouts
        /// count only the time between bytes, so only a total deadline ends the request.
        @Test func aProviderTricklingOneByteEveryTwoSecondsIsCutOffAtTheDeadlineAsOffline() async throws {
            let world = try await SessionProviderTests.World()
            try await world.signIn()
            let sessions = SessionManager(store: world.vault, transport: URLSessionTransport(timeout: 3, clock: ContinuousClock()),
                                          clock: world.clock, random: { 0.5 })
            world.clock.advance(by: 3700)
            try await world.provider.control("/test/trickle", ["count": 1, "interval": 2, "bytes": 30])

            let started = ContinuousClock.now
            let result = try await sessions.refresh(world.key)
            let elapsed = ContinuousClock.now - started
            guard case .offline(nil, let reason) = result else { Issue.record("expected offline, got \(result)"); return }
            #expect(reason.contains("did not answer within 3 s"), "\(reason)")
            #expect(elapsed < .seconds(20), "the refresh took \(elapsed): the deadline did not cut the trickle (60 s)")
            #expect(try await world.stored() != nil, "a slow provider deleted the login")
            // The provider is fine again: the next attempt goes through.
            #expect(try await sessions.refresh(world.key).outcome == "refreshed")
        }

        /// Through the daemon: the provider holds its (already rotated) answer 8 s; a Logout sent
        /// meanwhile returns at once, and the late answer neither brings the login back nor leaves
        /// its new tokens alive.
        @Test func aLogoutDuringAHeldRefreshReturnsPromptlyAndTheLoginStaysGone() async throws {
            let world = try SessionDaemonTests.World()
            defer { world.cli.stopDaemon() }
            try await world.signIn()
            world.clock.advance(by: 3600)
            try await world.provider.control("/test/delay", ["seconds": 8])
            // Each SessionClient has one connection and one call at a time: the app refreshing and
            // the app logging out are two clients, as they would be two processes.
            let refresher = world.sessions, sessions = world.sessions, key = world.key
            let refresh = Task { try await refresher.refresh(key) }
            let deadline = Date().addingTimeInterval(20)
            while try await world.provider.refreshResponses(200) == 0 && Date() < deadline { usleep(20_000) }
            #expect(try await world.provider.refreshResponses(200) == 1, "the refresh never reached the provider")

            let started = ContinuousClock.now
            let logout = try await sessions.logout(key)
            let took = ContinuousClock.now - started
            #expect(took < .seconds(4), "Logout took \(took) behind a refresh held 8 s")
            #expect(logout.wasLoggedIn)
            await #expect(throws: VaultError(.notFound, "")) { try await sessions.status(key) }

            let late = try await refresh.value
            #expect(late.outcome == "reauthRequired" && late.grant == nil, "the late refresh answered \(late.outcome)")
            await #expect(throws: VaultError(.notFound, "")) { try await sessions.status(key) }
            #expect(try await sessions.autoLogin(key).outcome == "reauthRequired")
            #expect(try await world.provider.refreshRequests() == 1)
            // Logout revoked the old pair; the late answer's new pair was revoked too (4 requests).
            let revocations = Date().addingTimeInterval(10)
            while try await world.provider.revocationRequests() < 4 && Date() < revocations { usleep(20_000) }
            #expect(try await world.provider.revocationRequests() == 4)
        }
    }
}
