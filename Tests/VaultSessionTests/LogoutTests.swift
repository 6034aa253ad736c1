import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// Logout wipes at once and revokes at the provider, queueing the revocation while it is down.
@Suite(.timeLimit(.minutes(20))) struct LogoutTests {
    @Test func logoutRevokesTheRefreshTokenThenTheAccessToken() async throws {
        let h = try SessionHarness([.ok, .ok])
        try await h.signIn()
        var result: LogoutResult?
        let seen = try await events(of: h.sessions, provider: h.provider) {
            result = try await h.sessions.logout(h.key)
        }
        #expect(result == LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false))
        #expect(seen.map(\.kind) == [.loggedOut])
        #expect(try await h.storedLogin() == nil)
        #expect(try await h.revocationRecords().isEmpty)
        let requests = h.transport.requests
        #expect(requests.map(\.url) == [revocationEndpoint, revocationEndpoint])
        #expect(requests.map { $0["token"] } == ["R1", "A1"])
        #expect(requests.map { $0["token_type_hint"] } == ["refresh_token", "access_token"])
        #expect(requests.allSatisfy { $0.usedBasicAuth })
    }

    @Test func withTheProviderDownTheLoginIsWipedAndTheRevocationQueued() async throws {
        let h = try SessionHarness([.unreachable])
        try await h.signIn()
        let result = try await h.sessions.logout(h.key)
        #expect(result == LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: true))
        #expect(try await h.storedLogin() == nil)
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .noSession)

        let records = try await h.revocationRecords()
        #expect(records.count == 1)
        #expect(records.first?.service == "sortedvault/revocation")
        let record = try #require(records.first)
        let queued = try QueuedRevocation(id: record.account, sealedRecord: try await h.memory.retrieve(record.key).secret)
        #expect(queued.login == h.key)
        #expect(text(queued.refreshToken) == "R1")
        #expect(text(queued.accessToken) == "A1")
        #expect(await h.sessions.queuedRevocationCount == 1)
        #expect(h.sessions.nextWakeUp() == h.clock.now.addingTimeInterval(1.5))

        // The provider comes back; nothing is sent before the hold-back is over.
        h.transport.enqueue(.ok, .ok)
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 1)

        h.clock.advance(by: 1.5)
        await h.sessions.runDueWork()
        let retried = Array(h.transport.requests.dropFirst())
        #expect(retried.map { $0["token"] } == ["R1", "A1"])
        #expect(retried.map { $0["token_type_hint"] } == ["refresh_token", "access_token"])
        #expect(try await h.revocationRecords().isEmpty)
        #expect(await h.sessions.queuedRevocationCount == 0)
        #expect(h.sessions.nextWakeUp() == nil)
    }

    @Test func logoutTwiceIsFine() async throws {
        let h = try SessionHarness([.ok, .ok])
        try await h.signIn()
        #expect(try await h.sessions.logout(h.key).wasLoggedIn)
        let again = try await h.sessions.logout(h.key)
        #expect(again == LogoutResult(wasLoggedIn: false, revoked: false, revocationQueued: false))
        #expect(h.transport.requestCount == 2)
    }

    @Test func withoutARevocationEndpointLogoutOnlyWipes() async throws {
        let h = try SessionHarness(provider: try testProvider(revocation: false))
        try await h.signIn()
        #expect(try await h.sessions.logout(h.key) == LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: false))
        #expect(try await h.storedLogin() == nil)
        #expect(try await h.revocationRecords().isEmpty)
        #expect(h.transport.requestCount == 0)
    }

    @Test func aRefusedRevocationIsDroppedNotRetried() async throws {
        let h = try SessionHarness([.oauthError("invalid_client", status: 401)])
        try await h.signIn()
        #expect(try await h.sessions.logout(h.key) == LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: false))
        #expect(try await h.revocationRecords().isEmpty)
        #expect(await h.sessions.queuedRevocationCount == 0)
    }

    /// A logout that stopped after writing its journal and before wiping: `resume()` finishes it.
    @Test func resumeFinishesALogoutInterruptedBeforeTheWipe() async throws {
        let h = try SessionHarness([.ok, .ok])
        try await h.signIn()
        let session = try #require(try await h.storedLogin())
        let journal = QueuedRevocation(for: session, login: h.key, at: h.clock.now)
        try await h.memory.store(journal.sealedRecord(), for: try journal.item, options: .none)

        let restarted = try h.restartedManager()
        let seen = try await events(of: restarted, provider: h.provider) {
            try await restarted.resume()
        }
        #expect(seen.map(\.kind) == [.loggedOut])
        #expect(try await h.storedLogin() == nil)
        #expect(await restarted.queuedRevocationCount == 1)

        await restarted.runDueWork()
        #expect(h.transport.requests.map { $0["token"] } == ["R1", "A1"])
        #expect(try await h.revocationRecords().isEmpty)
    }

    /// A journal left by an earlier login must not wipe the login signed in since.
    @Test func resumeKeepsANewerLoginUnderTheSameKey() async throws {
        let h = try SessionHarness([.ok, .ok])
        try await h.signIn(access: "OLD", refresh: "ROLD")
        let old = try #require(try await h.storedLogin())
        let journal = QueuedRevocation(for: old, login: h.key, at: h.clock.now)
        try await h.memory.store(journal.sealedRecord(), for: try journal.item, options: .none)
        try await h.signIn(access: "NEW", refresh: "RNEW")

        let restarted = try h.restartedManager()
        try await restarted.resume()
        #expect(text(try await h.storedLogin()?.accessToken) == "NEW")
        await restarted.runDueWork()
        #expect(h.transport.requests.map { $0["token"] } == ["ROLD", "OLD"])
    }
}
