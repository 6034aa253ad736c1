import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// Every row of the Supabase outcome tables (docs/providers.md), through the manager.
@Suite(.timeLimit(.minutes(20))) struct SupabaseAnswerTableTests {
    static let anonKey = "eyJhbGciOiJIUzI1NiJ9.anon-key.sig"

    static func provider() throws -> OAuthProvider {
        try OAuthProvider.supabase(projectURL: URL(string: "https://abc.supabase.co")!, apiKey: secure(anonKey))
    }

    static let session = #"{"access_token":"A2","token_type":"bearer","expires_in":3600,"expires_at":1800003600,"refresh_token":"R2","user":{"id":"8d3f-uuid","aud":"authenticated"}}"#

    static let rows: [AnswerRow] = [
        AnswerRow(name: "GoTrue's 200", reply: .answer(status: 200, body: session), expected: .refreshed(token: "A2")),
        AnswerRow(name: "a 200 that is no session", reply: .answer(status: 200, body: "{}"), expected: .rejected(containing: "invalid_response")),
        AnswerRow(name: "refresh_token_not_found", reply: gotrueError("refresh_token_not_found"), expected: .reauthRequired),
        AnswerRow(name: "refresh_token_already_used", reply: gotrueError("refresh_token_already_used"), expected: .reauthRequired),
        AnswerRow(name: "session_not_found", reply: gotrueError("session_not_found", status: 403), expected: .reauthRequired),
        AnswerRow(name: "session_expired", reply: gotrueError("session_expired", status: 403), expected: .reauthRequired),
        AnswerRow(name: "user_not_found", reply: gotrueError("user_not_found", status: 404), expected: .reauthRequired),
        AnswerRow(name: "user_banned", reply: gotrueError("user_banned", status: 403), expected: .reauthRequired),
        AnswerRow(name: "the older invalid_grant form",
                  reply: .answer(status: 400, body: #"{"error":"invalid_grant","error_description":"Invalid Refresh Token: Refresh Token Not Found"}"#),
                  expected: .reauthRequired),
        AnswerRow(name: "over_request_rate_limit", reply: gotrueError("over_request_rate_limit", status: 429), expected: .offline),
        AnswerRow(name: "HTTP 502", reply: .answer(status: 502, body: "bad gateway"), expected: .offline),
        AnswerRow(name: "HTTP 500 error object", reply: gotrueError("unexpected_failure", status: 500), expected: .offline),
        AnswerRow(name: "HTTP 408", reply: .answer(status: 408, body: ""), expected: .offline),
        AnswerRow(name: "no answer", reply: .unreachable, expected: .offline),
        AnswerRow(name: "no apikey", reply: .answer(status: 401, body: #"{"message":"No API key found in request"}"#),
                  expected: .rejected(containing: "No API key found")),
        AnswerRow(name: "a wrong apikey", reply: .answer(status: 401, body: #"{"message":"Invalid API key"}"#),
                  expected: .rejected(containing: "Invalid API key")),
        AnswerRow(name: "bad_json", reply: gotrueError("bad_json", message: "Could not parse request body as JSON"),
                  expected: .rejected(containing: "bad_json")),
        AnswerRow(name: "validation_failed", reply: gotrueError("validation_failed", message: "Refresh token is required"),
                  expected: .rejected(containing: "validation_failed")),
        AnswerRow(name: "an error field that is not invalid_grant", reply: .oauthError("invalid_request"),
                  expected: .rejected(containing: "invalid_request")),
        AnswerRow(name: "HTTP 404 HTML", reply: .answer(status: 404, body: "<html>no</html>"), expected: .rejected(containing: "http_404")),
        AnswerRow(name: "a redirect", reply: .answer(status: 307, body: ""), expected: .rejected(containing: "http_307")),
        AnswerRow(name: "an error echoing the refresh token", reply: gotrueError("weird", message: "token R1-refresh-token"),
                  expected: .rejected(containing: "withheld")),
    ]

    @Test(arguments: rows)
    func eachGoTrueAnswerHasItsOutcome(_ row: AnswerRow) async throws {
        let h = try SessionHarness(provider: try Self.provider())
        try await h.check(row, secrets: [Self.anonKey])
    }

    @Test func theRefreshIsJSONWithTheApikeyHeader() async throws {
        let h = try SessionHarness([.answer(status: 200, body: Self.session)], provider: try Self.provider())
        try await h.signIn(access: "A1", refresh: "R1\"quote")
        h.clock.advance(by: 3601)
        let result = try await h.sessions.autoLogin(h.key)
        #expect(result.outcome == "refreshed")
        #expect(try await h.storedLogin()?.userID == "8d3f-uuid")
        let request = try #require(h.transport.requests.first)
        #expect(request.url.absoluteString == "https://abc.supabase.co/auth/v1/token?grant_type=refresh_token")
        #expect(request.bodyFormat == .json)
        #expect(request.json("refresh_token") == "R1\"quote")
        #expect(request.headers["apikey"] == Self.anonKey)
        #expect(request.fields.isEmpty)
        #expect(!request.url.absoluteString.contains(Self.anonKey))
    }

    struct LogoutRow: Sendable, CustomTestStringConvertible {
        let reply: ScriptedOAuthTransport.Reply
        let expected: LogoutResult
        var testDescription: String { "\(reply) → \(expected)" }
    }

    static let logoutRows: [LogoutRow] = [
        LogoutRow(reply: .answer(status: 204, body: ""), expected: LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false)),
        LogoutRow(reply: .answer(status: 401, body: #"{"code":401,"error_code":"bad_jwt","msg":"invalid JWT"}"#),
                  expected: LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false)),
        LogoutRow(reply: gotrueError("session_not_found", status: 403), expected: LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false)),
        LogoutRow(reply: gotrueError("user_not_found", status: 404), expected: LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false)),
        LogoutRow(reply: .answer(status: 503, body: ""), expected: LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: true)),
        LogoutRow(reply: .unreachable, expected: LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: true)),
        LogoutRow(reply: gotrueError("bad_json"), expected: LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: false)),
    ]

    @Test(arguments: logoutRows)
    func eachLogoutAnswerHasItsResult(_ row: LogoutRow) async throws {
        let h = try SessionHarness([row.reply], provider: try Self.provider())
        try await h.signIn(access: "A1", refresh: "R1")
        #expect(try await h.sessions.logout(h.key) == row.expected)
        #expect(try await h.storedLogin() == nil, "the login is wiped whatever GoTrue says")
        #expect(try await h.revocationRecords().count == (row.expected.revocationQueued ? 1 : 0))
        let request = try #require(h.transport.requests.first)
        #expect(request.url.absoluteString == "https://abc.supabase.co/auth/v1/logout?scope=local")
        #expect(request.authorization == "Bearer A1")
        #expect(request.headers["apikey"] == Self.anonKey)
        #expect(h.transport.requestCount == 1)
    }
}
