import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultSession

extension PostgresSuite {
    /// Issue 22's scenario 5: a logout on one daemon while another refreshes the login, and a logout
    /// whose revocation cannot be sent before its daemon dies. Three real daemons, django-oauth-toolkit
    /// (which rotates refresh tokens); the provider's own records are the truth: which tokens it
    /// issued, which revocations it answered, which tokens its tables still hold.
    @Suite struct FleetLogoutTests {
        /// B's refresh is answered by the provider (the refresh token rotated, new tokens issued) and
        /// held there; A logs the login out; then B gets its answer. B's tokens are never stored (no
        /// daemon knows the login) and are revoked, as the login's own tokens are: every token the
        /// provider issued is revoked exactly once and its token tables hold none.
        @Test func aRefreshAnsweredAfterALogoutOnAnotherDaemonIsNeverStoredAndItsTokensAreRevoked() async throws {
            // B must get the held answer: a provider deadline (real time) longer than a busy machine
            // takes for the logout in between. An answer B never gets is a lost one, whose tokens no
            // daemon can revoke (FleetSlowProviderTests is about those).
            let fleet = try FleetDaemons(count: 3, database: try FleetDatabase.fresh(), providerDeadlineSeconds: 120)
            defer { fleet.stopAll() }
            let provider = try OAuthTestProvider()
            let key = FleetDaemonTests.key
            _ = try await FleetDaemonTests.signIn(fleet.sessions(0), provider)
            fleet.clock.advance(by: 3600)

            try await provider.delay(seconds: 600)   // held until the test sets it back to 0
            let refreshing = Task { try await fleet.sessions(1).autoLogin(key) }
            try await hangGuard {
                while try await provider.refreshResponses(200) < 1 { try await Task.sleep(for: .milliseconds(20)) }
            }
            let logout = try await hangGuard { try await fleet.sessions(0).logout(key) }
            #expect(logout.wasLoggedIn && logout.revoked, "\(logout)")
            try await provider.delay(seconds: 0)
            let late = try await hangGuard(seconds: 600) { try await refreshing.value }
            #expect(Self.signedOut(late), "B answered \(late) for a login logged out while it refreshed")
            if case .offline(_, let reason) = late { print("B offline: \(reason)\n" + fleet.hosts[1].daemonOutput().suffix(3000)) }

            for index in fleet.hosts.indices {
                let result = try await fleet.sessions(index).autoLogin(key)
                #expect(Self.signedOut(result), "daemon \(index) answered \(result.outcome) after the logout")
            }
            let issued = try await provider.issuedTokens()
            let revoked = try await provider.revokedTokens()
            #expect(issued.count == 4, "the sign-in's and B's access and refresh tokens: \(issued.count)")
            for (index, token) in issued.enumerated() {
                #expect(revoked[token] == 1, "issued token \(index) was revoked \(revoked[token] ?? 0) times")
            }
            let live = try await provider.liveTokens()
            #expect(live.access == 0 && live.refresh == 0, "the provider still holds \(live.access) access and \(live.refresh) refresh tokens")
            #expect(try await provider.refreshRequests() == 1)
            #expect(try await Self.queuedRevocations(fleet) == 0)
            print("fleet logout vs refresh: \(issued.count) tokens issued, \(revoked.values.reduce(0, +)) revocations answered, B answered \(late.outcome), live tokens \(live)")
        }

        /// The provider's revocation endpoint is down when A logs out, and A is killed -9 as soon as
        /// the logout returns (its revocation queued). Once the provider is back, B or C claims the
        /// outbox entry and delivers it: each of the login's tokens is revoked exactly once.
        @Test func aLogoutsQueuedRevocationSurvivesItsDaemonsKillAndIsDeliveredOnceByAnother() async throws {
            let fleet = try FleetDaemons(count: 3, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let provider = try OAuthTestProvider()
            let key = FleetDaemonTests.key
            _ = try await FleetDaemonTests.signIn(fleet.sessions(0), provider)

            try await provider.revocation(down: true)
            let logout = try await hangGuard { try await fleet.sessions(0).logout(key) }
            fleet.hosts[0].killDaemon()
            #expect(logout.wasLoggedIn && !logout.revoked && logout.revocationQueued, "\(logout)")
            #expect(try await provider.revokedTokens().isEmpty)
            #expect(try await Self.queuedRevocations(fleet) == 1)
            // Every daemon's `sortedvault status` counts the fleet's queue, not its own items.
            for index in 1..<3 {
                #expect(try await fleet.items(index).status().queuedRevocations == 1, "daemon \(index)'s status")
            }
            try await provider.revocation(down: false)

            // B and C look for due entries every 30 s of their clock; the entry is due a hold-back
            // (seconds, on the database's clock) after A's failed attempt.
            let issued = try await provider.issuedTokens()
            try await hangGuard(seconds: 600) {
                while try await Self.queuedRevocations(fleet) > 0 {
                    fleet.clock.advance(by: 31)
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
            // A few more rounds: nothing is sent twice.
            for _ in 0..<4 {
                fleet.clock.advance(by: 31)
                try await Task.sleep(for: .milliseconds(250))
            }
            let revoked = try await provider.revokedTokens()
            #expect(issued.count == 2)
            for (index, token) in issued.enumerated() {
                #expect(revoked[token] == 1, "the login's token \(index) was revoked \(revoked[token] ?? 0) times")
            }
            let live = try await provider.liveTokens()
            #expect(live.access == 0 && live.refresh == 0, "the provider still holds \(live.access) access and \(live.refresh) refresh tokens")
            for index in 1..<3 {
                #expect(Self.signedOut(try await fleet.sessions(index).autoLogin(key)))
                #expect(try await fleet.items(index).status().queuedRevocations == 0, "daemon \(index)'s status")
            }
            print("fleet logout, A killed: \(try await provider.revocationRequests()) revocation requests, \(revoked.values.reduce(0, +)) answered 200, live tokens \(live)")
        }

        static func signedOut(_ result: AutoLoginResult) -> Bool {
            if case .reauthRequired(.noSession) = result { true } else { false }
        }

        /// The outbox's entries, as the database's administrator counts them.
        static func queuedRevocations(_ fleet: FleetDaemons) async throws -> Int {
            let rows = try await fleet.database.sql("SELECT count(*) FROM sortedvault_outbox")
            return try rows.first.map { try $0.decode(Int.self) } ?? -1
        }
    }
}
