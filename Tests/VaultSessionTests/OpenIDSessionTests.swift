import Foundation
import Synchronization
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// The manager's side of `oidc` logins, with a scripted verifier (the real checks are VaultOIDC's,
/// and the daemon-level OIDC tests run them against the real provider).
@Suite(.timeLimit(.minutes(20))) struct OpenIDSessionTests {
    static let issuer = URL(string: "https://id.example.test/o")!

    /// Accepts id tokens `good-<sub>`, refuses `bad-…`, and cannot be reached for `down-…`. Asked
    /// for a nonce, it accepts only `good-<sub>` followed by `|nonce=<the nonce>`. The subject is
    /// percent-decoded (``encoded(_:)``), so a token stays ASCII whatever the subject holds.
    final class ScriptedVerifier: OpenIDVerifier {
        let checked = Locked<[String]>([])

        /// `subject` as a `good-` token carries it: every byte of its UTF-8 but letters, digits and `-` as `%XX`.
        static func encoded(_ subject: String) -> String {
            subject.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")) ?? ""
        }

        func endpoints(of issuer: URL) async throws(OpenIDVerificationError) -> OpenIDEndpoints {
            OpenIDEndpoints(token: URL(string: issuer.absoluteString + "/token/")!,
                            revocation: URL(string: issuer.absoluteString + "/revoke_token/")!,
                            authorization: URL(string: issuer.absoluteString + "/authorize/")!)
        }

        func verifiedSubject(of idToken: SecureBytes, issuer: URL, clientID: String,
                             nonce: SecureBytes?) async throws(OpenIDVerificationError) -> String {
            var token = text(idToken) ?? ""
            checked.withLock { $0.append(token) }
            if let nonce {
                let suffix = "|nonce=" + (text(nonce) ?? "")
                guard token.hasSuffix(suffix) else { throw .refused("wrongNonce: the id token carries another nonce") }
                token.removeLast(suffix.count)
            }
            if token.hasPrefix("good-") { return String(token.dropFirst(5)).removingPercentEncoding ?? "" }
            if token.hasPrefix("down-") { throw .unreachable("the key set could not be fetched") }
            throw .refused("badSignature: the signature does not verify")
        }
    }

    func harness(_ script: [ScriptedOAuthTransport.Reply] = []) async throws -> (SessionHarness, ScriptedVerifier, OAuthProvider) {
        let verifier = ScriptedVerifier()
        let h = try SessionHarness(script)
        h.sessions.useOpenID(verifier)
        let provider = try await h.sessions.provider(for: ProviderSettings(kind: .oidc, clientID: "sorted-app", issuer: Self.issuer))
        return (h, verifier, provider)
    }

    func signIn(_ h: SessionHarness, _ provider: OAuthProvider, idToken: String?) async throws {
        try await h.sessions.save(TokenResponse(accessToken: secure("A1"), expiresIn: 3600, refreshToken: secure("R1"),
                                                idToken: idToken.map(secure), userID: "unverified"),
                                  provider: provider, for: h.key)
    }

    @Test func theEndpointsComeFromDiscovery() async throws {
        let (_, _, provider) = try await harness()
        #expect(provider.kind == .oidc)
        #expect(provider.issuer == Self.issuer)
        #expect(provider.tokenEndpoint.absoluteString == "https://id.example.test/o/token/")
        #expect(provider.revocationEndpoint?.absoluteString == "https://id.example.test/o/revoke_token/")
    }

    @Test func aVerifiedSignInIsStoredWithTheVerifiedSubject() async throws {
        let (h, verifier, provider) = try await harness()
        try await signIn(h, provider, idToken: "good-user-42")
        #expect(try await h.storedLogin()?.userID == "user-42")
        #expect(verifier.checked.withLock { $0 } == ["good-user-42"])
    }

    @Test(arguments: [("bad-signature", VaultError.Code.invalidArgument), ("down-keys", .unavailable)])
    func aSignInWhoseIDTokenFailsIsRefusedAndNothingIsStored(_ token: String, _ code: VaultError.Code) async throws {
        let (h, _, provider) = try await harness()
        let error = await vaultErrorCode { try await signIn(h, provider, idToken: token) }
        #expect(error == code)
        #expect(try await h.storedLogin() == nil)
    }

    @Test func aSignInWithoutAnIDTokenIsRefused() async throws {
        let (h, _, provider) = try await harness()
        #expect(await vaultErrorCode { try await signIn(h, provider, idToken: nil) } == .invalidArgument)
        #expect(try await h.storedLogin() == nil)
    }

    @Test func withoutAVerifierOIDCIsRefused() async throws {
        let h = try SessionHarness()
        let error = await vaultErrorCode { _ = try await h.sessions.provider(for: ProviderSettings(kind: .oidc, clientID: "c", issuer: Self.issuer)) }
        #expect(error == .unavailable)
    }

    static func refreshAnswer(id: String?) -> ScriptedOAuthTransport.Reply {
        .answer(status: 200, body: #"{"access_token":"A2","token_type":"Bearer","expires_in":3600,"refresh_token":"R2""#
                + (id.map { #","id_token":"\#($0)""# } ?? "") + "}")
    }

    @Test func everyRefreshedIDTokenIsVerified() async throws {
        let (h, verifier, provider) = try await harness([Self.refreshAnswer(id: "good-user-42"), Self.refreshAnswer(id: nil)])
        try await signIn(h, provider, idToken: "good-user-42")
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "refreshed")
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "refreshed", "a refresh may leave the id token out")
        #expect(verifier.checked.withLock { $0 } == ["good-user-42", "good-user-42"])
    }

    @Test func aRefusedRefreshedIDTokenIsProviderRejectedAndNothingIsDeleted() async throws {
        let (h, _, provider) = try await harness([Self.refreshAnswer(id: "bad-token")])
        try await signIn(h, provider, idToken: "good-user-42")
        h.clock.advance(by: 3601)
        let error = await vaultErrorCode { _ = try await h.sessions.autoLogin(h.key) }
        #expect(error == .providerRejected)
        #expect(text(try await h.storedLogin()?.refreshToken) == "R1")
    }

    @Test func aRefreshedIDTokenForAnotherUserIsRefused() async throws {
        let (h, _, provider) = try await harness([Self.refreshAnswer(id: "good-someone-else")])
        try await signIn(h, provider, idToken: "good-user-42")
        h.clock.advance(by: 3601)
        #expect(await vaultErrorCode { _ = try await h.sessions.autoLogin(h.key) } == .providerRejected)
    }

    /// The refresh token may have rotated: it is kept; the unverifiable id token is not.
    @Test func anIDTokenThatCannotBeVerifiedAfterARefreshIsDroppedAndTheRotatedTokensKept() async throws {
        let (h, _, provider) = try await harness([Self.refreshAnswer(id: "down-keys")])
        try await signIn(h, provider, idToken: "good-user-42")
        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).outcome == "refreshed")
        let stored = try #require(try await h.storedLogin())
        #expect(text(stored.refreshToken) == "R2")
        #expect(text(stored.idToken) == "good-user-42")
        #expect(stored.userID == "user-42")
    }

    @Test func theSettingsOfAnOIDCProviderResolveToItAgain() async throws {
        let (h, _, provider) = try await harness()
        let settings = ProviderSettings(provider)
        #expect(settings.tokenEndpoint == nil && settings.issuer == Self.issuer && settings.clientID == "sorted-app")
        #expect(try await h.sessions.provider(for: settings) == provider)
    }

    @Test func anOIDCLoginRoundTripsSealed() async throws {
        let (h, _, provider) = try await harness()
        try await signIn(h, provider, idToken: "good-user-42")
        let stored = try #require(try await h.storedLogin())
        #expect(stored.provider == provider)
        #expect(stored.provider.issuer == Self.issuer)
    }
}
