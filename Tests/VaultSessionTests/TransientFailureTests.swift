import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// A provider that is down or overloaded deletes nothing and holds the background work back; a
/// client asking is held back only by a one-second floor.
@Suite(.timeLimit(.minutes(20))) struct TransientFailureTests {
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

    /// Was "attemptsWithinTheHoldBackMakeNoRequest": AutoLogin used to wait out the whole
    /// hold-back, which is the bug. The background work still does (next test).
    @Test func autoLoginsWithinTheFloorMakeNoRequestAndTheFirstAfterItDoes() async throws {
        let h = try SessionHarness([.answer(status: 429, body: ""), .tokens(access: "A2")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        // First failure: ceiling 2 s, jitter 0.5 → the background work is held back 1.5 s.
        #expect(try await h.sessions.status(h.key).retryNotBefore == h.clock.now.addingTimeInterval(1.5))
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        h.clock.advance(by: 0.9)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        #expect(h.transport.requestCount == 1, "a client asked again within the 1 s floor")

        h.clock.advance(by: 0.1)
        let result = try await h.sessions.autoLogin(h.key)
        #expect(result.outcome == "refreshed")
        #expect(result.accessToken == "A2")
        #expect(h.transport.requestCount == 2)
        #expect(try await h.sessions.status(h.key).retryNotBefore == nil)
    }

    @Test func theBackgroundWorkWaitsOutTheWholeHoldBack() async throws {
        let h = try SessionHarness([.unreachable, .tokens(access: "A2")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 1)
        let notBefore = try #require(try await h.sessions.status(h.key).retryNotBefore)
        #expect(h.sessions.nextWakeUp() == notBefore)
        h.clock.advance(by: 1.4)
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 1, "the background work retried within the hold-back")
        h.clock.set(to: notBefore)
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 2)
        #expect(try await h.sessions.autoLogin(h.key).accessToken == "A2")
    }

    /// "After being offline, AutoLogin keeps answering offline until the hold-back runs out".
    @Test func whenTheProviderIsBackTheVeryNextAutoLoginIsRefreshedWhateverTheHoldBack() async throws {
        let h = try SessionHarness([.unreachable, .unreachable, .unreachable, .unreachable, .unreachable,
                                    .tokens(access: "A2", refresh: "R2")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        for _ in 0..<5 {
            #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
            h.clock.advance(by: 1)
        }
        #expect(h.transport.requestCount == 5, "every AutoLogin a second apart asked the provider")
        // Five failures: the background hold-back is now 24 s (ceiling 32 s, jitter 0.5)…
        let status = try await h.sessions.status(h.key)
        #expect(status.retryNotBefore == h.clock.now.addingTimeInterval(24 - 1))
        // …but the provider is back, and the very next AutoLogin refreshes.
        let result = try await h.sessions.autoLogin(h.key)
        #expect(result.outcome == "refreshed" && result.accessToken == "A2", "got \(result)")
        #expect(h.transport.requestCount == 6)
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
        #expect(h.transport.requestCount == 2, "autoLogin still respects the one-second floor")
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
