import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// Every row of the Firebase outcome table (docs/providers.md), through the manager.
@Suite(.timeLimit(.minutes(20))) struct FirebaseAnswerTableTests {
    static let apiKey = "AIzaFakeWebApiKey-123"

    static func provider() throws -> OAuthProvider {
        try OAuthProvider.firebase(apiKey: secure(apiKey), securetokenBase: URL(string: "http://127.0.0.1:9099/securetoken.googleapis.com/")!)
    }

    static let rows: [AnswerRow] = [
        AnswerRow(name: "securetoken's 200", reply: .answer(status: 200, body: #"{"access_token":"ID2","expires_in":"3600","token_type":"Bearer","refresh_token":"R2","id_token":"ID2","user_id":"uid-1","project_id":"123"}"#),
                  expected: .refreshed(token: "ID2")),
        AnswerRow(name: "a 200 without id_token", reply: .answer(status: 200, body: #"{"expires_in":"3600"}"#),
                  expected: .rejected(containing: "invalid_response")),
        AnswerRow(name: "TOKEN_EXPIRED", reply: firebaseError("TOKEN_EXPIRED"), expected: .reauthRequired),
        AnswerRow(name: "INVALID_REFRESH_TOKEN", reply: firebaseError("INVALID_REFRESH_TOKEN"), expected: .reauthRequired),
        AnswerRow(name: "USER_DISABLED", reply: firebaseError("USER_DISABLED"), expected: .reauthRequired),
        AnswerRow(name: "USER_NOT_FOUND", reply: firebaseError("USER_NOT_FOUND"), expected: .reauthRequired),
        AnswerRow(name: "a message with detail", reply: firebaseError("USER_DISABLED : The user account has been disabled by an administrator."),
                  expected: .reauthRequired),
        AnswerRow(name: "TOO_MANY_ATTEMPTS_TRY_LATER", reply: firebaseError("TOO_MANY_ATTEMPTS_TRY_LATER"), expected: .offline),
        AnswerRow(name: "HTTP 503", reply: .answer(status: 503, body: "unavailable"), expected: .offline),
        AnswerRow(name: "HTTP 500 error object", reply: firebaseError("INTERNAL", status: 500), expected: .offline),
        AnswerRow(name: "HTTP 429", reply: .answer(status: 429, body: ""), expected: .offline),
        AnswerRow(name: "HTTP 408", reply: .answer(status: 408, body: ""), expected: .offline),
        AnswerRow(name: "no answer", reply: .unreachable, expected: .offline),
        AnswerRow(name: "INVALID_GRANT_TYPE", reply: firebaseError("INVALID_GRANT_TYPE"), expected: .rejected(containing: "INVALID_GRANT_TYPE")),
        AnswerRow(name: "MISSING_REFRESH_TOKEN", reply: firebaseError("MISSING_REFRESH_TOKEN"), expected: .rejected(containing: "MISSING_REFRESH_TOKEN")),
        AnswerRow(name: "a bad API key", reply: firebaseError("API key not valid. Please pass a valid API key."),
                  expected: .rejected(containing: "API key not valid")),
        AnswerRow(name: "PROJECT_NUMBER_MISMATCH", reply: firebaseError("PROJECT_NUMBER_MISMATCH"), expected: .rejected(containing: "PROJECT_NUMBER_MISMATCH")),
        AnswerRow(name: "an RFC 6749 invalid_grant (not Firebase's shape)", reply: .oauthError("invalid_grant"), expected: .rejected(containing: "http_400")),
        AnswerRow(name: "HTTP 403 HTML", reply: .answer(status: 403, body: "<html>forbidden</html>"), expected: .rejected(containing: "http_403")),
        AnswerRow(name: "a redirect", reply: .answer(status: 302, body: ""), expected: .rejected(containing: "http_302")),
        AnswerRow(name: "an error echoing the refresh token", reply: firebaseError("BAD R1-refresh-token"),
                  expected: .rejected(containing: "withheld")),
        AnswerRow(name: "an error echoing the API key", reply: firebaseError("key \(apiKey) refused"),
                  expected: .rejected(containing: "withheld")),
    ]

    @Test(arguments: rows)
    func eachFirebaseAnswerHasItsOutcome(_ row: AnswerRow) async throws {
        let h = try SessionHarness(provider: try Self.provider())
        try await h.check(row, secrets: [Self.apiKey])
    }

    @Test func theRefreshIsAFormPostWithTheKeyOnlyInTheSentURL() async throws {
        let h = try SessionHarness([.answer(status: 200, body: #"{"id_token":"ID2","refresh_token":"R2","expires_in":"3600"}"#)],
                                   provider: try Self.provider())
        try await h.signIn(access: "ID1", refresh: "R1")
        h.clock.advance(by: 3601)
        _ = try await h.sessions.autoLogin(h.key)
        let request = try #require(h.transport.requests.first)
        #expect(request.url.absoluteString == "http://127.0.0.1:9099/securetoken.googleapis.com/v1/token")
        #expect(request.query("key") == Self.apiKey)
        #expect(request.bodyFormat == .form)
        #expect(request["grant_type"] == "refresh_token")
        #expect(request["refresh_token"] == "R1")
        #expect(request.authorization == nil)
        #expect(!"\(h.provider)".contains(Self.apiKey))
    }

    @Test func logoutWipesLocallyAndSaysTheProviderCannotRevoke() async throws {
        let h = try SessionHarness(provider: try Self.provider())
        try await h.signIn(access: "ID1", refresh: "R1")
        let result = try await h.sessions.logout(h.key)
        #expect(result == LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: false, providerCannotRevoke: true))
        #expect(h.transport.requestCount == 0)
        #expect(try await h.storedLogin() == nil)
        #expect(try await h.revocationRecords().isEmpty)
    }
}
