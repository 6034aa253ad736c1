import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// A manager reads the login, then claims its lease; another manager may refresh the login
/// completely in between (its lease claimed, the provider asked, the result committed, the lease
/// given back). The first manager's claim is then granted, but the refresh token it read was
/// rotated: it must not send it (a strict provider answers a reused refresh token by revoking the login).
@Suite(.timeLimit(.minutes(20))) struct ClaimRaceTests {
    @Test func aManagerWhoseLoginWasRefreshedBeforeItsClaimAsksTheProviderNothing() async throws {
        let (fleet, provider, hooked, a, b) = try await Self.expiredLogin()
        hooked.arm {
            let refreshed = try await a.autoLogin(FleetSimulation.key)
            #expect(refreshed.accessToken == "A2")
        }
        let seen = try await b.autoLogin(FleetSimulation.key)
        #expect(provider.refreshTokensSent == ["R1"])
        #expect(seen.outcome == "valid" && seen.accessToken == "A2", "\(seen)")
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R2")
    }

    /// Two managers of one fleet and an expired login signed in through `a`; `b` claims through
    /// `hooked`, which runs an armed action just before its claim.
    static func expiredLogin() async throws -> (FleetSimulation, CountingProvider, BeforeClaim, SessionManager, SessionManager) {
        let fleet = FleetSimulation()
        let provider = CountingProvider()
        let hooked = BeforeClaim(inner: fleet.store)
        let a = try fleet.manager(transport: provider.transport)
        let b = try SessionManager(store: hooked, transport: provider.transport, clock: fleet.clock, random: { 0.5 }, sleeper: fleet.sleeper)
        try await fleet.signIn(a)
        fleet.clock.advance(by: 3601)
        return (fleet, provider, hooked, a, b)
    }
}

/// A lease store that runs an armed action once, just before the next claim goes through.
final class BeforeClaim: ForwardingDueRefreshes, Sendable {
    let inner: any DueRefreshes
    private let action = Locked<(@Sendable () async throws -> Void)?>(nil)

    init(inner: any DueRefreshes) { self.inner = inner }

    func arm(_ body: @escaping @Sendable () async throws -> Void) { action.withLock { $0 = body } }

    func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim {
        if let body = action.withLock({ action in defer { action = nil }; return action }) { try await body() }
        return try await inner.claimRefresh(of: item, owner: owner, duration: duration)
    }
}

/// A login logged out between a manager's read and its claim: the claim finds no login (the store
/// says `.notFound`, as a database's UPDATE finds no row), and the manager answers as for any login
/// that is gone, asking the provider nothing.
@Suite(.timeLimit(.minutes(20))) struct LogoutBeforeClaimTests {
    @Test func aLoginLoggedOutBeforeTheClaimIsAnsweredNoSession() async throws {
        let (fleet, provider, hooked, a, b) = try await ClaimRaceTests.expiredLogin()
        hooked.arm { _ = try await a.logout(FleetSimulation.key) }
        let seen = try await b.autoLogin(FleetSimulation.key)
        guard case .reauthRequired(.noSession) = seen else {
            Issue.record("a login logged out before the claim answered \(seen)")
            return
        }
        #expect(provider.refreshTokensSent.isEmpty)
        #expect(try await fleet.storedLogin() == nil)
    }
}
