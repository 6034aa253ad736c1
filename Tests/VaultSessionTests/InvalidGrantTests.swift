import Foundation
import Synchronization
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// `invalid_grant` wipes the login, unless the store meanwhile holds a newer one.
@Suite(.timeLimit(.minutes(20))) struct InvalidGrantTests {
    @Test func invalidGrantWipesTheLoginAndTellsWatchers() async throws {
        let h = try SessionHarness([.oauthError("invalid_grant")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        var result: AutoLoginResult?
        let seen = try await events(of: h.sessions, provider: h.provider) {
            result = try await h.sessions.autoLogin(h.key)
        }
        #expect(result?.reauthReason == .refreshRejected)
        #expect(try await h.storedLogin() == nil)
        #expect(seen.map(\.kind) == [.reauthRequired])
        #expect(seen.first?.key == h.key)
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .noSession)
        #expect(h.transport.requestCount == 1)
    }

    @Test func aNewerSignInWrittenDuringTheRefreshIsNotWiped() async throws {
        let h = try SessionHarness { store, clock in
            ScriptedOAuthTransport { request in
                guard request["refresh_token"] == "R1" else { return .tokens(access: "unexpected") }
                // Another sign-in lands while this refresh is on the wire.
                let other = try SessionManager(store: store, transport: ScriptedOAuthTransport(), clock: clock)
                try await other.save(TokenResponse(accessToken: secure("B1"), expiresIn: 3600, refreshToken: secure("RB")),
                                     provider: try testProvider(), for: SessionHarness.key)
                return .oauthError("invalid_grant")
            }
        }
        try await h.signIn()
        h.clock.advance(by: 3601)
        let result = try await h.sessions.autoLogin(h.key)
        #expect(result.outcome == "valid")
        #expect(result.accessToken == "B1")
        #expect(text(try await h.storedLogin()?.refreshToken) == "RB")
        #expect(h.transport.requestCount == 1)
    }

    /// Another process rotated the same login's refresh token: the refresh is retried with the new one.
    @Test func aRefreshTokenRotatedElsewhereIsRetriedNotWiped() async throws {
        let h = try SessionHarness { store, clock in
            ScriptedOAuthTransport { request in
                switch request["refresh_token"] {
                case "R1":
                    try await Self.rotateInStore(store, at: clock.now, access: "A9", refresh: "R9")
                    return .oauthError("invalid_grant")
                case "R9":
                    return .tokens(access: "A10", refresh: "R10")
                default:
                    return .oauthError("invalid_request")
                }
            }
        }
        try await h.signIn()
        h.clock.advance(by: 3601)
        let result = try await h.sessions.autoLogin(h.key)
        #expect(result.outcome == "refreshed")
        #expect(result.accessToken == "A10")
        #expect(h.transport.requests.map { $0["refresh_token"] } == ["R1", "R9"])
        #expect(text(try await h.storedLogin()?.refreshToken) == "R10")
    }

    @Test func invalidGrantAgainAfterTheReReadWipes() async throws {
        let h = try SessionHarness { store, clock in
            ScriptedOAuthTransport { request in
                if request["refresh_token"] == "R1" {
                    try await Self.rotateInStore(store, at: clock.now, access: "A9", refresh: "R9")
                }
                return .oauthError("invalid_grant")
            }
        }
        try await h.signIn()
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .refreshRejected)
        #expect(h.transport.requestCount == 2)
        #expect(try await h.storedLogin() == nil)
    }

    /// Writes the stored login refreshed with an access token that is already nearly expired (30 s).
    static func rotateInStore(_ store: InMemoryTokenStore, at now: Date, access: String, refresh: String) async throws {
        let item = try SessionItems.item(for: SessionHarness.key)
        let current = try LoginSession(sealedRecord: try await store.retrieve(item).secret)
        let rotated = current.refreshed(
            with: TokenResponse(accessToken: secure(access), expiresIn: 30, refreshToken: secure(refresh)), at: now)
        try await store.store(rotated.sealedRecord(), for: item, options: .none)
    }
}
