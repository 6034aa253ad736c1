import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// A provider that is down or overloaded deletes nothing and holds further attempts back.
@Suite struct TransientFailureTests {
    @Test func aFailedRefreshIsOfflineAndKeepsTheLogin() async throws {
        let h = try SessionHarness([.answer(status: 503, body: "")])
        try await h.signIn()
        h.clock.advance(by: 3600 - 30)
        let result = try await h.sessions.autoLogin(h.key)
        guard case .offline(let grant, let reason) = result else { Issue.record("got \(result)"); return }
        #expect(text(grant?.accessToken) == "A1", "the cached token is still valid for 30 s")
        #expect(reason.contains("503"))
        let stored = try #require(try await h.storedLogin())
        #expect(text(stored.accessToken) == "A1")
        #expect(text(stored.refreshToken) == "R1")
    }

    @Test func theCachedTokenIsOmittedOnceItHasExpired() async throws {
        let h = try SessionHarness([.unreachable])
        try await h.signIn()
        h.clock.advance(by: 3601)
        let result = try await h.sessions.autoLogin(h.key)
        guard case .offline(let grant, _) = result else { Issue.record("got \(result)"); return }
        #expect(grant == nil)
        #expect(text(try await h.storedLogin()?.refreshToken) == "R1")
    }

    @Test func attemptsWithinTheHoldBackMakeNoRequest() async throws {
        let h = try SessionHarness([.answer(status: 429, body: ""), .tokens(access: "A2")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        // First failure: ceiling 2 s, jitter 0.5 → held back 1.5 s.
        #expect(try await h.sessions.status(h.key).retryNotBefore == h.clock.now.addingTimeInterval(1.5))
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        h.clock.advance(by: 1.4)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        #expect(h.transport.requestCount == 1)

        h.clock.advance(by: 0.1)
        let result = try await h.sessions.autoLogin(h.key)
        #expect(result.outcome == "refreshed")
        #expect(result.accessToken == "A2")
        #expect(h.transport.requestCount == 2)
        #expect(try await h.sessions.status(h.key).retryNotBefore == nil)
    }

    @Test func theHoldBackGrowsWithConsecutiveFailures() async throws {
        let h = try SessionHarness([.unreachable, .answer(status: 500, body: ""), .unreachable])
        try await h.signIn()
        h.clock.advance(by: 3601)
        for (attempt, holdBack) in [1.5, 3, 6].enumerated() {
            #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
            #expect(h.transport.requestCount == attempt + 1)
            #expect(try await h.sessions.status(h.key).retryNotBefore == h.clock.now.addingTimeInterval(holdBack))
            h.clock.advance(by: holdBack)
        }
    }

    @Test func aForcedRefreshIgnoresTheHoldBack() async throws {
        let h = try SessionHarness([.unreachable, .unreachable, .tokens(access: "A2")])
        try await h.signIn()
        h.clock.advance(by: 3600 - 30)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        #expect(try await h.sessions.refresh(h.key).outcome == "offline")
        #expect(h.transport.requestCount == 2)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        #expect(h.transport.requestCount == 2, "autoLogin still respects the (longer) hold-back")
        #expect(try await h.sessions.refresh(h.key).accessToken == "A2")
        #expect(h.transport.requestCount == 3)
    }

    @Test func aProviderRejectionThrowsAndDeletesNothing() async throws {
        let h = try SessionHarness([.answer(status: 401, body: #"{"error":"invalid_client"}"#)])
        try await h.signIn()
        h.clock.advance(by: 3601)
        #expect(await vaultErrorCode { _ = try await h.sessions.autoLogin(h.key) } == .providerRejected)
        #expect(text(try await h.storedLogin()?.refreshToken) == "R1")
    }
}
