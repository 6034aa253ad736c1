import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// A login ended in doubt is told to every later caller as `rotationInDoubt`, not `noSession`,
/// until it is signed in again or logged out: the caller whose retry ended it may have stopped
/// waiting (issue 34, point 13b), and whoever asks next must still learn that the provider may hold
/// a token the vault never got.
@Suite(.timeLimit(.minutes(20))) struct EndedInDoubtTests {
    /// Two lost answers end the login; the answers every later caller gets.
    private func endedInDoubt(_ script: [ScriptedOAuthTransport.Reply] = []) async throws -> SessionHarness {
        let h = try SessionHarness([.lostAfterSending, .lostAfterSending, .ok, .ok] + script)
        try await h.signIn()
        h.clock.advance(by: 3601)
        _ = try await h.sessions.autoLogin(h.key)
        h.clock.advance(by: 2)
        _ = try await h.sessions.autoLogin(h.key)  // the caller that may never have heard the answer
        return h
    }

    @Test func everyLaterCallerIsToldTheLoginEndedInDoubt() async throws {
        let h = try await endedInDoubt()
        for _ in 0..<3 {
            h.clock.advance(by: 60)
            #expect(try await h.sessions.autoLogin(h.key).reauthReason == .rotationInDoubt)
            #expect(try await h.sessions.refresh(h.key).reauthReason == .rotationInDoubt)
        }
        #expect(h.transport.requestCount == 4, "a request was made for a login that ended")
    }

    @Test func aNewSignInOrALogoutEndsTheNotice() async throws {
        let h = try await endedInDoubt()
        try await h.signIn(access: "A9", refresh: "R9")
        #expect(try await h.sessions.autoLogin(h.key).accessToken == "A9")
        try await h.memory.delete(try SessionItems.item(for: h.key))  // gone some other way
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .noSession)

        let other = try await endedInDoubt()
        _ = try await other.sessions.logout(other.key)
        #expect(try await other.sessions.autoLogin(other.key).reauthReason == .noSession)
    }
}
