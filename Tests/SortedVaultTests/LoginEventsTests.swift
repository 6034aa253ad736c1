import Foundation
import SortedVault
import Testing
import VaultTesting

@Suite(.timeLimit(.minutes(20))) struct LoginEventsTests {
    @Test func theFirstEventIsNoLoginThenTheSignInShows() async throws {
        let h = try LoginHarness()
        var events = h.login.events.makeAsyncIterator()
        #expect(try await events.next() == .current(nil))
        try await h.signIn()
        #expect(try await events.next() == .changed(SessionEvent(kind: .saved, key: h.login.key, at: h.clock.now)))
    }

    @Test func theFirstEventIsTheCurrentStateThenRefreshAndLogout() async throws {
        let h = try LoginHarness([.tokens(access: "A2", refresh: "R2")])
        let saved = try await h.signIn()
        var events = h.login.events.makeAsyncIterator()
        #expect(try await events.next() == .current(saved))
        h.clock.advance(by: 3600)
        _ = try await h.login.accessToken()
        #expect(try await events.next() == .changed(SessionEvent(kind: .refreshed, key: h.login.key, at: h.clock.now)))
        try await h.login.logout()
        #expect(try await events.next() == .changed(SessionEvent(kind: .loggedOut, key: h.login.key, at: h.clock.now)))
    }

    @Test func anotherLoginsEventsAreNotShown() async throws {
        let h = try LoginHarness()
        let other = try VaultLogin(service: "com.sorted.api", account: "grace", in: h.manager, clock: h.clock)
        var events = h.login.events.makeAsyncIterator()
        #expect(try await events.next() == .current(nil))
        let answer = #"{"access_token":"G1","token_type":"Bearer","expires_in":3600}"#
        try await other.save(tokenResponseJSON: SecureBytes(copying: Array(answer.utf8)), provider: LoginHarness.provider)
        try await h.signIn()
        #expect(try await events.next() == .changed(SessionEvent(kind: .saved, key: h.login.key, at: h.clock.now)))
    }
}
