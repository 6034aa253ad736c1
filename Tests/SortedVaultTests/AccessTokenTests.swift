import Foundation
import SortedVault
import Testing
import VaultTesting

@Suite(.timeLimit(.minutes(20))) struct AccessTokenTests {
    @Test func theStoredTokenIsAnsweredWithoutTheProviderWhileItLasts() async throws {
        let h = try LoginHarness()
        try await h.signIn()
        h.clock.advance(by: 3000)
        #expect(try await h.login.accessToken() == "A1")
        #expect(h.transport.requests.isEmpty)
    }

    @Test func anExpiredTokenIsRefreshedSilentlyThenAnInvalidGrantSaysSignInAgain() async throws {
        let h = try LoginHarness([.tokens(access: "A2", refresh: "R2"), .oauthError("invalid_grant")])
        try await h.signIn()
        h.clock.advance(by: 3600)
        #expect(try await h.login.accessToken() == "A2")
        #expect(h.transport.requests.count == 1)
        h.clock.advance(by: 3600)
        await #expect(throws: SortedVaultError.signInAgain(.refreshRejected)) { try await h.login.accessToken() }
        #expect(try await h.login.status() == nil, "the refused login was wiped")
        await #expect(throws: SortedVaultError.signInAgain(.noSession)) { try await h.login.accessToken() }
    }

    @Test func aCallerAskingForMoreThanTheTokenHasLeftGetsOneRefresh() async throws {
        let h = try LoginHarness([.tokens(access: "A2", refresh: "R2", expiresIn: 3600)])
        try await h.signIn()
        h.clock.advance(by: 2600)  // 1000 s left: enough for the manager's 60 s, not for 1800 s
        #expect(try await h.login.accessToken(minValid: 60) == "A1")
        #expect(h.transport.requests.isEmpty)
        #expect(try await h.login.accessToken(minValid: 1800) == "A2")
        #expect(h.transport.requests.count == 1)
        #expect(try await h.login.accessToken(minValid: 1800) == "A2", "the new token lasts: no second refresh")
        #expect(h.transport.requests.count == 1)
    }

    @Test func aProviderWhoseTokensLiveLessThanMinValidGivesItsFreshTokenOnce() async throws {
        let h = try LoginHarness([.tokens(access: "A2", refresh: "R2", expiresIn: 300)])
        try await h.signIn()
        h.clock.advance(by: 3600)
        #expect(try await h.login.accessToken(minValid: 600) == "A2")
        #expect(h.transport.requests.count == 1)
    }

    @Test func offlineAnswersTheCachedTokenOnlyWhileItLastsForMinValid() async throws {
        let h = try LoginHarness([.unreachable, .unreachable])
        try await h.signIn()
        h.clock.advance(by: 3570)  // 30 s left: the manager tries a refresh, the provider is down
        #expect(try await h.login.accessToken(minValid: 10) == "A1")
        h.clock.advance(by: 2)     // past the manager's one-second floor between client attempts
        let error = await thrown { _ = try await h.login.accessToken(minValid: 60) }
        guard case SortedVaultError.offline(let reason)? = error else {
            Issue.record("expected .offline, got \(String(describing: error))")
            return
        }
        #expect(!reason.isEmpty)
        #expect(try await h.login.status() != nil, "nothing was deleted")
    }

    @Test func theFourOutcomesStayAvailableUnderneath() async throws {
        let h = try LoginHarness()
        guard case .reauthRequired(.noSession) = try await h.login.autoLogin() else {
            Issue.record("expected reauthRequired(noSession)")
            return
        }
        try await h.signIn()
        guard case .valid(let grant) = try await h.login.autoLogin() else {
            Issue.record("expected valid")
            return
        }
        #expect(grant.accessToken.constantTimeEquals(Array("A1".utf8)))
    }

    @Test func errorsReadAsTheirReasonInLocalizedDescription() {
        let error: any Error = VaultError(.locked, "the vault is locked: unlock it first (`sortedvault unlock`)")
        #expect(error.localizedDescription == "the vault is locked: unlock it first (`sortedvault unlock`)")
        let signIn: any Error = SortedVaultError.signInAgain(.refreshRejected)
        #expect(signIn.localizedDescription == "sign in again: " + ReauthReason.refreshRejected.explanation)
    }
}
