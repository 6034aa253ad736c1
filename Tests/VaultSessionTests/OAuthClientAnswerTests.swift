import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// How provider answers map to what the session logic does next.
@Suite(.timeLimit(.minutes(20))) struct OAuthClientAnswerTests {
    func refresh(answering reply: ScriptedOAuthTransport.Reply) async throws -> RefreshAnswer {
        let session = LoginSession(signIn: TokenResponse(accessToken: secure("A1"), refreshToken: secure("R1")),
                                   provider: try testProvider(), at: Date(timeIntervalSince1970: 1_800_000_000))
        return await OAuthClient(transport: ScriptedOAuthTransport([reply])).refresh(session, refreshToken: secure("R1"))
    }

    @Test func twoHundredGivesTheTokens() async throws {
        let answer = try await refresh(answering: .tokens(access: "A2", refresh: "R2", expiresIn: 900))
        guard case .tokens(let tokens) = answer else { Issue.record("got \(answer)"); return }
        #expect(text(tokens.accessToken) == "A2")
        #expect(text(tokens.refreshToken) == "R2")
        #expect(tokens.expiresIn == 900)
    }

    @Test func invalidGrantIsADeadRefreshToken() async throws {
        let answer = try await refresh(answering: .answer(status: 400, body: #"{"error":"invalid_grant","error_description":"revoked"}"#))
        guard case .invalidGrant = answer else { Issue.record("got \(answer)"); return }
    }

    @Test(arguments: [503, 500, 429, 408])
    func overloadAndServerErrorsAreTransient(_ status: Int) async throws {
        let answer = try await refresh(answering: .answer(status: status, body: #"{"error":"invalid_grant"}"#))
        guard case .transient(let reason) = answer else { Issue.record("got \(answer)"); return }
        #expect(reason.contains("\(status)"))
    }

    @Test func noAnswerAtAllIsTransient() async throws {
        let answer = try await refresh(answering: .unreachable)
        guard case .transient = answer else { Issue.record("got \(answer)"); return }
    }

    @Test func invalidClientIsARejection() async throws {
        let answer = try await refresh(answering: .answer(status: 401, body: #"{"error":"invalid_client","error_description":"unknown client"}"#))
        guard case .rejected(let error, let description) = answer else { Issue.record("got \(answer)"); return }
        #expect(error == "invalid_client")
        #expect(description == "unknown client")
    }

    @Test func anErrorWithoutJSONIsARejectionNamedByItsStatus() async throws {
        let answer = try await refresh(answering: .answer(status: 403, body: "<html>forbidden</html>"))
        guard case .rejected(let error, _) = answer else { Issue.record("got \(answer)"); return }
        #expect(error == "http_403")
    }

    @Test func anUnreadableTwoHundredIsARejectionNotTokens() async throws {
        let answer = try await refresh(answering: .answer(status: 200, body: #"{"token_type":"Bearer"}"#))
        guard case .rejected(let error, _) = answer else { Issue.record("got \(answer)"); return }
        #expect(error == "invalid_response")
    }

    @Test func revocationOfAnUnsupportedTokenTypeCountsAsDone() async throws {
        let transport = ScriptedOAuthTransport([.oauthError("unsupported_token_type")])
        let answer = await OAuthClient(transport: transport).revoke(secure("A1"), hint: "access_token",
                                                                    provider: try testProvider(), at: revocationEndpoint)
        guard case .revoked = answer else { Issue.record("got \(answer)"); return }
    }
}
