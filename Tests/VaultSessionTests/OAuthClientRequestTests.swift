import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// What the token and revocation requests carry, per client authentication method.
@Suite(.timeLimit(.minutes(20))) struct OAuthClientRequestTests {
    func session(_ provider: OAuthProvider) -> LoginSession {
        LoginSession(signIn: TokenResponse(accessToken: secure("A1"), refreshToken: secure("R1")), provider: provider,
                     at: Date(timeIntervalSince1970: 1_800_000_000))
    }

    func refreshRequest(_ provider: OAuthProvider) async throws -> ScriptedOAuthTransport.Request {
        let transport = ScriptedOAuthTransport([.tokens(access: "A2")])
        _ = await OAuthClient(transport: transport).refresh(session(provider), refreshToken: secure("R 1/+"))
        return try #require(transport.requests.first)
    }

    @Test func refreshSendsTheGrantAndTheRefreshTokenToTheTokenEndpoint() async throws {
        let request = try await refreshRequest(try testProvider())
        #expect(request.url == tokenEndpoint)
        #expect(request["grant_type"] == "refresh_token")
        #expect(request["refresh_token"] == "R 1/+")
    }

    @Test func basicClientsAuthenticateInTheHeaderOnly() async throws {
        let provider = try OAuthProvider(tokenEndpoint: tokenEndpoint, clientID: "desk top:1", clientSecret: secure("p@ss word"))
        let request = try await refreshRequest(provider)
        #expect(request.usedBasicAuth)
        #expect(request.authorization == "Basic " + Data("desk+top%3A1:p%40ss+word".utf8).base64EncodedString())
        #expect(request.basicCredentials?.id == "desk top:1")
        #expect(request.basicCredentials?.secret == "p@ss word")
        #expect(request["client_id"] == nil)
        #expect(request["client_secret"] == nil)
    }

    @Test func postClientsPutIDAndSecretInTheBody() async throws {
        let request = try await refreshRequest(try testProvider(secret: "p@ss word", authentication: .post))
        #expect(!request.usedBasicAuth)
        #expect(request.authorization == nil)
        #expect(request["client_id"] == "sorted-desktop")
        #expect(request["client_secret"] == "p@ss word")
    }

    @Test(arguments: OAuthProvider.ClientAuthentication.allCases)
    func publicClientsSendOnlyTheClientID(_ authentication: OAuthProvider.ClientAuthentication) async throws {
        let request = try await refreshRequest(try testProvider(secret: nil, authentication: authentication))
        #expect(request.authorization == nil)
        #expect(request["client_id"] == "sorted-desktop")
        #expect(request["client_secret"] == nil)
        #expect(request.fields.map(\.name) == ["grant_type", "refresh_token", "client_id"])
    }

    @Test func revocationSendsTheTokenAndItsHint() async throws {
        let transport = ScriptedOAuthTransport([.ok])
        let provider = try testProvider()
        let answer = await OAuthClient(transport: transport).revoke(secure("R1"), hint: "refresh_token", provider: provider,
                                                                    at: revocationEndpoint)
        guard case .revoked = answer else { Issue.record("expected revoked, got \(answer)"); return }
        let request = try #require(transport.requests.first)
        #expect(request.url == revocationEndpoint)
        #expect(request["token"] == "R1")
        #expect(request["token_type_hint"] == "refresh_token")
        #expect(request.usedBasicAuth)
    }
}
