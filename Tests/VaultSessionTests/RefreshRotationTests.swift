import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// After expiry the login is refreshed; the new tokens are in the store when the caller hears of them.
@Suite(.timeLimit(.minutes(20))) struct RefreshRotationTests {
    @Test func anExpiredTokenIsRefreshedAndStoredBeforeTheAnswer() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2", expiresIn: 900)])
        try await h.signIn()
        let signedIn = try #require(try await h.storedLogin())
        h.clock.advance(by: 3601)
        let result = try await h.sessions.autoLogin(h.key)
        guard case .refreshed(let grant) = result else { Issue.record("got \(result)"); return }
        #expect(text(grant.accessToken) == "A2")
        #expect(grant.expiresAt == h.clock.now.addingTimeInterval(900))

        let stored = try #require(try await h.storedLogin())
        #expect(text(stored.accessToken) == "A2")
        #expect(text(stored.refreshToken) == "R2")
        #expect(stored.accessTokenExpiresAt == h.clock.now.addingTimeInterval(900))
        #expect(stored.issuedAt == h.clock.now)
        #expect(stored.lastRefreshedAt == h.clock.now)
        #expect(stored.signedInAt == h.start)
        #expect(stored.loginID == signedIn.loginID)

        let request = try #require(h.transport.requests.first)
        #expect(request.url == tokenEndpoint)
        #expect(request["grant_type"] == "refresh_token")
        #expect(request["refresh_token"] == "R1")
    }

    @Test func theRotatedRefreshTokenIsUsedNextTime() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2"), .tokens(access: "A3", refresh: "R3")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).accessToken == "A2")
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).accessToken == "A3")
        #expect(h.transport.requests.map { $0["refresh_token"] } == ["R1", "R2"])
        #expect(text(try await h.storedLogin()?.refreshToken) == "R3")
    }

    @Test func aResponseWithoutARefreshTokenKeepsTheOldOne() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: nil), .tokens(access: "A3", refresh: nil)])
        try await h.signIn()
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).accessToken == "A2")
        #expect(text(try await h.storedLogin()?.refreshToken) == "R1")
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).accessToken == "A3")
        #expect(h.transport.requests.map { $0["refresh_token"] } == ["R1", "R1"])
    }

    @Test func aRefreshPublishesARefreshedEvent() async throws {
        let h = try SessionHarness([.tokens(access: "A2")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        let seen = try await events(of: h.sessions, provider: h.provider) {
            _ = try await h.sessions.autoLogin(h.key)
        }
        #expect(seen.map(\.kind) == [.refreshed])
        #expect(seen.first?.key == h.key)
        #expect(seen.first?.at == h.clock.now)
    }

    @Test func aForcedRefreshRefreshesAValidToken() async throws {
        let h = try SessionHarness([.tokens(access: "A2")])
        try await h.signIn()
        let result = try await h.sessions.refresh(h.key)
        #expect(result.outcome == "refreshed")
        #expect(result.accessToken == "A2")
        #expect(h.transport.requestCount == 1)
    }
}
