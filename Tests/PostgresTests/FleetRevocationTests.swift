import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultSession
import VaultTesting

extension PostgresSuite {
    /// Session managers on two store instances (two daemons) of one database: a revocation one of
    /// them could not send is delivered by the fleet, once.
    @Suite struct FleetRevocationTests {
        static let key = try! ItemKey(service: "com.sorted.api", account: "ada")
        static let provider = try! OAuthProvider(
            tokenEndpoint: URL(string: "https://auth.example.test/oauth/token")!,
            revocationEndpoint: URL(string: "https://auth.example.test/oauth/revoke")!,
            clientID: "sorted-desktop", clientSecret: SecureBytes(copying: Array("client-secret".utf8)))
        /// A short hold-back, so the database's clock passes it quickly.
        static let configuration = SessionManager.Configuration(retry: RetryPolicy(base: 0.2, cap: 0.2))

        @Test func aRevocationDaemonACouldNotSendIsDeliveredOnceByTheFleet() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey(), clock = ManualClock()
            let down = ScriptedOAuthTransport([.unreachable]), up = ScriptedOAuthTransport([.ok, .ok])
            try await database.withStore(master: master, clock: clock) { storeA in
                try await database.withStore(master: master, clock: clock) { storeB in
                    let a = try SessionManager(store: storeA, transport: down, clock: clock, configuration: Self.configuration, random: { 0.5 })
                    let b = try SessionManager(store: storeB, transport: up, clock: clock, configuration: Self.configuration, random: { 0.5 })
                    try await a.save(TokenResponse(accessToken: SecureBytes(copying: Array("A1".utf8)), expiresIn: 3600,
                                                   refreshToken: SecureBytes(copying: Array("R1".utf8))),
                                     provider: Self.provider, for: Self.key)

                    let logout = try await a.logout(Self.key)
                    #expect(logout == LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: true))
                    guard case .reauthRequired(.noSession) = try await b.autoLogin(Self.key) else {
                        Issue.record("the login survived the logout on the other daemon")
                        return
                    }
                    #expect(try await b.revocationBacklog().pending == 1)

                    // Both daemons look once the hold-back is over; A's provider is back too.
                    down.enqueue(.ok, .ok)
                    try await database.waitFromNow(0.3)
                    try await b.resume()
                    clock.advance(by: 1)
                    async let byA: Void = a.runDueWork()
                    async let byB: Void = b.runDueWork()
                    _ = await (byA, byB)

                    let sent = (down.requests.dropFirst() + up.requests).compactMap { $0["token"] }
                    #expect(sent.sorted() == ["A1", "R1"], "each token revoked once across the fleet, got \(sent)")
                    #expect(try await a.revocationBacklog() == RevocationBacklog(pending: 0, stuck: 0, oldestAge: nil))
                }
            }
        }
    }
}
