import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// No login's lock is held across the network. A logout wipes at once whatever a
/// refresh is doing, and a refresh that answers afterwards neither stores its tokens nor brings
/// the login back: they are revoked.
@Suite(.timeLimit(.minutes(20))) struct LogoutDuringRefreshTests {
    /// A harness whose refresh requests wait at `gate` (and then rotate to A2/R2); revocations are
    /// answered at once.
    static func gatedHarness(_ gate: Gate) throws -> SessionHarness {
        try SessionHarness { _, _ in
            ScriptedOAuthTransport { request in
                guard request["grant_type"] == "refresh_token" else { return .ok }
                await gate.wait()
                return .tokens(access: "A2", refresh: "R2")
            }
        }
    }

    @Test func aLogoutDuringAHeldRefreshWipesAtOnceAndTheLateAnswerIsRevokedNotStored() async throws {
        let gate = Gate()
        let h = try Self.gatedHarness(gate)
        try await h.signIn()
        h.clock.advance(by: 3601)
        let sessions = h.sessions, key = h.key
        let refresh = Task { try await sessions.autoLogin(key) }
        await h.transport.waitForRequests(1)

        let logout = try await finishes(within: 600) { try await sessions.logout(key) }
        #expect(logout == LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false),
                "the logout waited for the refresh on the wire")
        #expect(try await h.storedLogin() == nil)
        // A caller now is told at once, not made to wait for the old refresh.
        let after = try await finishes(within: 600) { try await sessions.autoLogin(key) }
        #expect(after?.reauthReason == .noSession)

        await gate.open()
        let late = try await refresh.value
        #expect(late.reauthReason == .noSession, "got \(late)")
        #expect(late.grant == nil)
        #expect(try await h.storedLogin() == nil, "the late refresh brought the login back")
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .noSession)
        // The tokens the late answer brought were revoked, refresh token first; nothing stays queued.
        let revoked = h.transport.requests.compactMap { $0["token"] }
        #expect(revoked == ["R1", "A1", "R2", "A2"])
        #expect(try await h.revocationRecords().isEmpty)
        #expect(await h.sessions.queuedRevocationCount == 0)
    }

    @Test func aNewSignInDuringAHeldRefreshIsKeptAndTheStaleAnswerIsRevoked() async throws {
        let gate = Gate()
        let h = try Self.gatedHarness(gate)
        try await h.signIn()
        h.clock.advance(by: 3601)
        let sessions = h.sessions, key = h.key
        let refresh = Task { try await sessions.autoLogin(key) }
        await h.transport.waitForRequests(1)

        let saved = try await finishes(within: 600) { try await h.signIn(access: "B1", refresh: "RB") }
        #expect(saved != nil, "the new sign-in waited for the refresh on the wire")
        await gate.open()
        let result = try await refresh.value
        #expect(result.outcome == "valid" && result.accessToken == "B1", "got \(result)")
        #expect(text(try await h.storedLogin()?.refreshToken) == "RB")
        #expect(h.transport.requests.compactMap { $0["token"] } == ["R2", "A2"])
    }

    @Test func aFailedRefreshAfterALogoutIsNotRecordedAgainstTheGoneLogin() async throws {
        let gate = Gate()
        let h = try SessionHarness { _, _ in
            ScriptedOAuthTransport { request in
                guard request["grant_type"] == "refresh_token" else { return .ok }
                await gate.wait()
                return .unreachable
            }
        }
        try await h.signIn()
        h.clock.advance(by: 3601)
        let sessions = h.sessions, key = h.key
        let refresh = Task { try await sessions.autoLogin(key) }
        await h.transport.waitForRequests(1)
        _ = try await finishes(within: 600) { try await sessions.logout(key) }
        await gate.open()
        #expect(try await refresh.value.reauthReason == .noSession)
        #expect(h.sessions.nextWakeUp() == nil, "a retry was scheduled for a login that is gone")
    }
}
