import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// `list` shows the stored logins — names, user id, state, expiries — of one service or all.
@Suite(.timeLimit(.minutes(20))) struct SessionListTests {
    @Test func listShowsEveryLoginSortedAndOnlyLogins() async throws {
        let h = try SessionHarness()
        try await h.signIn(refresh: nil, expiresIn: 30)
        let other = try ItemKey(service: "com.sorted.admin", account: "bob")
        try await h.sessions.save(TokenResponse(accessToken: secure("B1"), expiresIn: 3600, refreshToken: secure("RB")),
                                  provider: h.provider, for: other)
        try await h.memory.store(secure("not a login"), service: "com.sorted.app", account: "plain", options: .none)

        let all = try await h.sessions.list()
        #expect(all.map { "\($0.service)/\($0.account)" } == ["com.sorted.admin/bob", "com.sorted.app/ada"])
        #expect(all[0].state == "valid" && all[0].hasRefreshToken)
        #expect(all[1].state == "reauthRequired" && !all[1].hasRefreshToken)
        #expect(all[0].accessTokenExpiresAt == h.start.addingTimeInterval(3600))
        #expect(try await h.sessions.list(service: "com.sorted.app").map(\.account) == ["ada"])
        #expect(try await h.sessions.list(service: "com.sorted.none").isEmpty)

        _ = try await h.sessions.logout(other)
        #expect(try await h.sessions.list().map(\.account) == ["ada"])
    }

    @Test func listRefusesAServiceFilterThatIsNotNFC() async throws {
        let h = try SessionHarness()
        #expect(await vaultErrorCode { _ = try await h.sessions.list(service: "com.\u{212A}iosk") } == .invalidArgument)
    }
}
