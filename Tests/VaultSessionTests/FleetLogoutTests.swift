import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// A logout on one manager while another refreshes: the refresher's tokens are never stored and are
/// revoked, and callers waiting on the refresh hear of the logout at once.
@Suite(.timeLimit(.minutes(20))) struct FleetLogoutTests {
    @Test func aLogoutOnOneManagerDuringAnothersRefreshWinsAndTheRefreshedTokensAreRevoked() async throws {
        let fleet = FleetSimulation()
        let gate = Gate()
        let refresher = CountingProvider(gates: [0: gate])
        let other = CountingProvider()
        let a = try fleet.manager(transport: refresher.transport), b = try fleet.manager(transport: other.transport)
        try await fleet.signIn(a)
        fleet.clock.advance(by: 3601)

        let refresh = Task { try await a.autoLogin(FleetSimulation.key) }
        await refresher.transport.waitForRequests(1)
        // A caller on b waits for a's refresh rather than asking the provider a second time.
        let waiting = Task { try await b.autoLogin(FleetSimulation.key) }
        try await fleet.sleepers(1)
        #expect(other.transport.requestCount == 0)

        let logout = try await finishes(within: 600) { try await b.logout(FleetSimulation.key) }
        #expect(logout == LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false))
        #expect(try await waiting.value.reauthReason == .noSession)
        #expect(other.refreshTokensSent.isEmpty)

        await gate.open()
        #expect(try await refresh.value.reauthReason == .noSession)
        #expect(try await fleet.storedLogin() == nil, "the refresh brought the login back")
        #expect(refresher.revoked == ["R2", "A2"])
        #expect(other.revoked == ["R1", "A1"])
        #expect(try await fleet.memory.list(service: SessionItems.revocationService).isEmpty)
    }
}
