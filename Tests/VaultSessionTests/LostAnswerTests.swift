import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// An answer lost after the request may have reached the provider leaves the login in doubt: one
/// retry with the same refresh token, then `rotationInDoubt`, never a loop.
@Suite(.timeLimit(.minutes(20))) struct LostAnswerTests {
    @Test func aLostAnswerIsRetriedOnceWithTheSameRefreshToken() async throws {
        let h = try SessionHarness([.lostAfterSending, .tokens(access: "A2", refresh: "R2")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        #expect(try await h.storedLogin() != nil, "a lost answer deleted the login")
        h.clock.advance(by: 2)
        let retried = try await h.sessions.autoLogin(h.key)
        #expect(retried.outcome == "refreshed" && retried.accessToken == "A2", "\(retried)")
        #expect(h.transport.requests.map { $0["refresh_token"] } == ["R1", "R1"])
    }

    @Test(arguments: [ScriptedOAuthTransport.Reply.lostAfterSending, .oauthError("invalid_grant")])
    func aRetryThatFailsTooEndsTheLoginInDoubtAndRevokesIt(_ retryAnswer: ScriptedOAuthTransport.Reply) async throws {
        let h = try SessionHarness([.lostAfterSending, retryAnswer, .ok, .ok])
        try await h.signIn()
        h.clock.advance(by: 3601)
        _ = try await h.sessions.autoLogin(h.key)
        h.clock.advance(by: 2)
        var outcome: AutoLoginResult?
        let seen = try await events(of: h.sessions, provider: h.provider) {
            outcome = try await h.sessions.autoLogin(h.key)
        }
        #expect(outcome?.reauthReason == .rotationInDoubt, "\(String(describing: outcome))")
        #expect(seen.map(\.kind) == [.reauthRequired])
        #expect(try await h.storedLogin() == nil)
        #expect(h.transport.requests.map { $0["refresh_token"] ?? $0["token"] } == ["R1", "R1", "R1", "A1"])
        // Never a third request: the login is gone, and the next caller hears why (EndedInDoubtTests).
        h.clock.advance(by: 60)
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .rotationInDoubt)
        #expect(h.transport.requestCount == 4)
    }

    @Test func aRequestThatNeverLeftLeavesNoDoubt() async throws {
        let h = try SessionHarness([.unreachable, .oauthError("invalid_grant")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "offline")
        h.clock.advance(by: 2)
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .refreshRejected)
    }

    /// The holder died (or is cut off) with its request out: after its lease, another manager's
    /// refresh is the one retry, and a refusal then is `rotationInDoubt`.
    @Test func aHolderThatNeverAnsweredLeavesTheNextManagerOneRetry() async throws {
        let fleet = FleetSimulation()
        let never = Gate()
        let dead = CountingProvider(gates: [0: never])
        let next = CountingProvider(answers: [0: .oauthError("invalid_grant")])
        let a = try fleet.manager(transport: dead.transport), b = try fleet.manager(transport: next.transport)
        try await fleet.signIn(a)
        fleet.clock.advance(by: 3601)
        let killed = Task { try await a.autoLogin(FleetSimulation.key) }
        await dead.transport.waitForRequests(1)
        fleet.clock.advance(by: 31)
        #expect(try await b.autoLogin(FleetSimulation.key).reauthReason == .rotationInDoubt)
        #expect(next.refreshTokensSent == ["R1"])
        #expect(try await fleet.storedLogin() == nil)
        // Should its answer come after all, it is revoked, never stored.
        await never.open()
        #expect(try await killed.value.reauthReason == .noSession)
        #expect(dead.revoked == ["R2", "A2"])
        #expect(try await fleet.storedLogin() == nil)
    }
}
