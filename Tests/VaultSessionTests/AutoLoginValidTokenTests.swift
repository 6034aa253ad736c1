import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// A stored access token that stays valid for `minValid` is answered at once, with no request.
@Suite(.timeLimit(.minutes(20))) struct AutoLoginValidTokenTests {
    @Test func aValidTokenIsAnsweredWithoutARequest() async throws {
        let h = try SessionHarness()
        try await h.signIn()
        let result = try await h.sessions.autoLogin(h.key)
        guard case .valid(let grant) = result else { Issue.record("got \(result)"); return }
        #expect(text(grant.accessToken) == "A1")
        #expect(grant.tokenType == "Bearer")
        #expect(grant.expiresAt == h.start.addingTimeInterval(3600))
        #expect(h.transport.requestCount == 0)
    }

    @Test func aTokenValidForExactlyMinValidIsStillAnswered() async throws {
        let h = try SessionHarness()
        try await h.signIn()
        h.clock.advance(by: 3600 - 60)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "valid")
        #expect(h.transport.requestCount == 0)
    }

    @Test func aTokenValidForLessThanMinValidIsRefreshed() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2")])
        try await h.signIn()
        h.clock.advance(by: 3600 - 59)
        let result = try await h.sessions.autoLogin(h.key)
        #expect(result.outcome == "refreshed")
        #expect(result.accessToken == "A2")
        #expect(h.transport.requestCount == 1)
    }

    @Test func aLargerMinValidRefreshesEarlier() async throws {
        let h = try SessionHarness([.tokens(access: "A2")], configuration: .init(minValid: 600))
        try await h.signIn()
        h.clock.advance(by: 3000)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "valid")
        h.clock.advance(by: 1)
        #expect(try await h.sessions.autoLogin(h.key).accessToken == "A2")
        #expect(h.transport.requestCount == 1)
    }

    @Test func noLoginIsReauthRequiredWithoutARequest() async throws {
        let h = try SessionHarness()
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .noSession)
        #expect(h.transport.requestCount == 0)
    }

    @Test func anExpiringTokenWithoutARefreshTokenIsReauthRequired() async throws {
        let h = try SessionHarness()
        try await h.signIn(refresh: nil)
        h.clock.advance(by: 3600 - 30)
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .noRefreshToken)
        #expect(h.transport.requestCount == 0)
    }
}
