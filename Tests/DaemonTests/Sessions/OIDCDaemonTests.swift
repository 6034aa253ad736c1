import Foundation
import TestSupport
import Testing
import Varlink
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession

extension DaemonSuite {
    /// `oidc` logins through the real daemon against django-oauth-toolkit with OpenID Connect on (RSA
    /// key, discovery, JWKS): the id token is verified at save (refused with a clear error, nothing
    /// stored) and after every refresh, following a key rotation.
    @Suite struct OIDCDaemonTests {
        typealias World = ProviderKindMatrixTests.World

        /// The settings an app saves; `issuer` defaults to the provider's own.
        func settings(_ world: World, issuer: URL? = nil) -> ProviderSettings {
            let provider = world.peer as! OAuthTestProvider
            return ProviderSettings(kind: .oidc, clientID: OAuthTestProvider.clientID,
                                    clientSecret: SecureBytes(copying: Array(OAuthTestProvider.clientSecret.utf8)),
                                    issuer: issuer ?? provider.issuer)
        }

        func answer(_ bytes: [UInt8]) throws -> [String: JSONValue] {
            guard case .object(let object) = try JSONValue.parse(bytes) else { throw HarnessError("bad sign-in answer") }
            return object
        }

        /// Saves `answer` and returns the refusal's reason; the login must not be stored.
        func refusal(_ world: World, _ answer: [String: JSONValue], issuer: URL? = nil) async throws -> String {
            do {
                try await world.sessions.save(tokenResponse: answer, provider: settings(world, issuer: issuer), for: world.key)
                Issue.record("the daemon stored a login whose id token fails")
                return ""
            } catch let error as VaultError {
                #expect(error.code == .invalidArgument, "\(error)")
                await #expect(throws: VaultError(.notFound, "")) { try await world.sessions.status(world.key) }
                return error.reason
            }
        }

        @Test func aValidIDTokenIsAcceptedAndTheUserIsItsVerifiedSubject() async throws {
            let world = try World(.oidc)
            let provider = world.peer as! OAuthTestProvider
            try await world.signIn()
            let status = try await world.sessions.status(world.key)
            #expect(status.providerKind == "oidc")
            #expect(status.userID == provider.userSubject)
            #expect(status.tokenEndpoint == provider.tokenEndpoint.absoluteString, "from the discovery document")
        }

        @Test func anIDTokenWithABadSignatureIsRefusedAtSave() async throws {
            let world = try World(.oidc)
            var signIn = try answer(try await (world.peer as! OAuthTestProvider).signInWithOpenID())
            let token = try #require(signIn["id_token"]?.stringValue)
            var parts = token.split(separator: ".").map(String.init)
            let signature = Array(parts[2])
            parts[2] = String(signature.dropLast(4)) + (signature.suffix(4) == Array("AAAA") ? "BBBB" : "AAAA")
            signIn["id_token"] = .string(parts.joined(separator: "."))
            let reason = try await refusal(world, signIn)
            #expect(reason.contains("id token") && reason.contains("badSignature"), "\(reason)")
        }

        @Test func anIDTokenForAnotherClientIsRefusedAtSave() async throws {
            let world = try World(.oidc)
            let other = try await (world.peer as! OAuthTestProvider).signInWithOpenID(
                client: (OAuthTestProvider.otherClientID, OAuthTestProvider.otherClientSecret))
            let reason = try await refusal(world, try answer(other))
            #expect(reason.contains("wrongAudience"), "\(reason)")
        }

        /// Signed in at 127.0.0.1 (so `iss` names it) but saved with the same provider reached as
        /// `localhost`: its discovery document names that issuer, the token another.
        @Test func anIDTokenFromAnotherIssuerIsRefusedAtSave() async throws {
            let world = try World(.oidc)
            let provider = world.peer as! OAuthTestProvider
            let signIn = try answer(try await provider.signInWithOpenID())
            let reason = try await refusal(world, signIn, issuer: URL(string: "http://localhost:\(provider.port)/o")!)
            #expect(reason.contains("wrongIssuer") || reason.contains("issuerMismatch"), "\(reason)")
        }

        @Test func anExpiredIDTokenIsRefusedAtSave() async throws {
            let world = try World(.oidc)
            let signIn = try answer(try await (world.peer as! OAuthTestProvider).signInWithOpenID())
            world.clock.advance(by: 2 * 86400)  // past the id token's exp (django-oauth-toolkit: 10 h)
            let reason = try await refusal(world, signIn)
            #expect(reason.contains("expired"), "\(reason)")
        }

        @Test func aKeyRotationAtTheProviderIsFollowed() async throws {
            let world = try World(.oidc)
            let provider = world.peer as! OAuthTestProvider
            try await world.signIn()
            let before = try await provider.documentRequests()
            try await provider.rotateSigningKey()
            // Within min_valid (60 s) of expiry, so AutoLogin refreshes, while the cached documents
            // are younger than their maximum age (1 h): only the unknown key id makes a fetch.
            world.clock.advance(by: 3600 - 55)
            let result = try await world.sessions.autoLogin(world.key)
            #expect(result.outcome == "refreshed", "\(result)")
            let after = try await provider.documentRequests()
            #expect(after.keys == before.keys + 1, "the new key id made the daemon fetch the key set once more")
            #expect(after.discovery == before.discovery, "the discovery document stays cached")
        }
    }
}
