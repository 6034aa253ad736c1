import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// Sign-ins the manager runs (authorization code + PKCE), with a scripted token endpoint and the
/// scripted OpenID verifier of ``OpenIDSessionTests`` (which demands `|nonce=<the sign-in's nonce>`).
@Suite(.timeLimit(.minutes(20))) struct SignInTests {
    typealias Verifier = OpenIDSessionTests.ScriptedVerifier
    static let redirect = URL(string: "http://127.0.0.1:40000/cb")!
    static let owner: UInt32 = 1000

    func harness() async throws -> SessionHarness {
        let h = try SessionHarness([])
        h.sessions.useOpenID(Verifier())
        return h
    }

    func oidcRequest(account: String? = nil, lifetime: TimeInterval = 300) -> SignInRequest {
        SignInRequest(service: "com.sorted.app", account: account,
                      settings: ProviderSettings(kind: .oidc, clientID: "sorted-cli", issuer: OpenIDSessionTests.issuer),
                      flow: .browser, redirectURI: Self.redirect, scopes: ["read"], lifetime: lifetime)
    }

    func parameter(_ name: String, of url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    /// A token answer whose id token the scripted verifier accepts for `nonce` (as subject `user-7`).
    static func answer(nonce: String) -> ScriptedOAuthTransport.Reply {
        .answer(status: 200, body: #"{"access_token":"A1","token_type":"Bearer","expires_in":3600,"refresh_token":"R1","id_token":"good-user-7|nonce=\#(nonce)"}"#)
    }

    @Test func theURLAsksForACodeWithAnS256ChallengeOfTheVerifierTheExchangeSends() async throws {
        let h = try await harness()
        let start = try await h.sessions.beginSignIn(oidcRequest(), owner: Self.owner)
        let url = start.authorizationURL
        #expect(url.absoluteString.hasPrefix("https://id.example.test/o/authorize/?"))
        #expect(parameter("response_type", of: url) == "code")
        #expect(parameter("code_challenge_method", of: url) == "S256")
        #expect(parameter("redirect_uri", of: url) == Self.redirect.absoluteString)
        #expect(parameter("scope", of: url)?.replacingOccurrences(of: "+", with: " ") == "openid read")
        let state = try #require(parameter("state", of: url))
        let nonce = try #require(parameter("nonce", of: url))
        #expect(state.count == 43 && nonce.count == 43, "32 random bytes each, base64url")
        let done = try await SessionHarness.completing(h, start, state: state, nonce: nonce)
        let exchange = try #require(done.transport.requests.first)
        #expect(exchange["grant_type"] == "authorization_code" && exchange["code"] == "the-code")
        let verifier = try #require(exchange["code_verifier"])
        #expect(verifier.count == 43)
        #expect(text(secure(verifier).sha256().base64URLEncoded()) == parameter("code_challenge", of: url))
    }

    @Test func aSignInIsStoredUnderTheVerifiedSubjectWhenNoAccountIsGiven() async throws {
        let h = try await harness()
        let start = try await h.sessions.beginSignIn(oidcRequest(), owner: Self.owner)
        let state = try #require(parameter("state", of: start.authorizationURL))
        let nonce = try #require(parameter("nonce", of: start.authorizationURL))
        h.transport.enqueue(Self.answer(nonce: nonce))
        let result = try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure("code=the-code&state=\(state)"), owner: Self.owner)
        #expect(result.key.account == "user-7" && result.status.userID == "user-7")
    }

    @Test func anIDTokenWithAnotherNonceIsRefusedAndNothingIsStored() async throws {
        let h = try await harness()
        let start = try await h.sessions.beginSignIn(oidcRequest(account: "ada"), owner: Self.owner)
        let state = try #require(parameter("state", of: start.authorizationURL))
        h.transport.enqueue(Self.answer(nonce: "another-sign-ins-nonce"))
        let code = await vaultErrorCode {
            _ = try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure("code=c&state=\(state)"), owner: Self.owner)
        }
        #expect(code == .providerRejected)
        #expect(try await h.sessions.list(service: nil).isEmpty)
    }

    @Test func aWrongStateChangesNothingAndTheRightOneStillCompletes() async throws {
        let h = try await harness()
        let start = try await h.sessions.beginSignIn(oidcRequest(account: "ada"), owner: Self.owner)
        let state = try #require(parameter("state", of: start.authorizationURL))
        let nonce = try #require(parameter("nonce", of: start.authorizationURL))
        // The last character of 32 bytes in base64url carries 4 bits: "A" is its value one time in 16.
        let otherState = state.dropLast() + (state.hasSuffix("A") ? "E" : "A")
        for forged in ["code=c&state=\(otherState)", "code=c", "error=access_denied&state=x"] {
            let code = await vaultErrorCode {
                _ = try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure(forged), owner: Self.owner)
            }
            #expect(code == .callbackMismatch, "\(forged)")
        }
        #expect(h.transport.requests.isEmpty, "no forged code reached the provider")
        h.transport.enqueue(Self.answer(nonce: nonce))
        let result = try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure("code=c&state=\(state)"), owner: Self.owner)
        #expect(result.key.account == "ada")
    }

    @Test func aSignInCompletesOnceOnlyForItsOwnerAndNotAfterItExpires() async throws {
        let h = try await harness()
        let start = try await h.sessions.beginSignIn(oidcRequest(account: "ada"), owner: Self.owner)
        let state = try #require(parameter("state", of: start.authorizationURL))
        let nonce = try #require(parameter("nonce", of: start.authorizationURL))
        let query = secure("code=c&state=\(state)")
        #expect(await vaultErrorCode { _ = try await h.sessions.completeSignIn(start.flowID, callbackQuery: query, owner: Self.owner + 1) }
                == .invalidArgument, "another user's call does not find it")
        #expect(h.sessions.cancelSignIn(start.flowID, owner: Self.owner + 1) == false)
        h.transport.enqueue(Self.answer(nonce: nonce))
        _ = try await h.sessions.completeSignIn(start.flowID, callbackQuery: query, owner: Self.owner)
        #expect(await vaultErrorCode { _ = try await h.sessions.completeSignIn(start.flowID, callbackQuery: query, owner: Self.owner) }
                == .invalidArgument, "a replay finds no sign-in")
        #expect(h.transport.requests.count == 1)

        let late = try await h.sessions.beginSignIn(oidcRequest(account: "ada", lifetime: 60), owner: Self.owner)
        h.clock.advance(by: 61)
        let lateState = try #require(parameter("state", of: late.authorizationURL))
        #expect(await vaultErrorCode {
            _ = try await h.sessions.completeSignIn(late.flowID, callbackQuery: secure("code=c&state=\(lateState)"), owner: Self.owner)
        } == .invalidArgument)
    }

    @Test func aDeclinedSignInIsAPlainErrorAndEndsTheFlow() async throws {
        let h = try await harness()
        let start = try await h.sessions.beginSignIn(oidcRequest(account: "ada"), owner: Self.owner)
        let state = try #require(parameter("state", of: start.authorizationURL))
        do {
            _ = try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure("error=access_denied&state=\(state)"), owner: Self.owner)
            Issue.record("a declined sign-in completed")
        } catch let error as VaultError {
            #expect(error.code == .providerRejected && error.reason.contains("declined"), "\(error)")
        }
        #expect(h.sessions.cancelSignIn(start.flowID, owner: Self.owner) == false, "the flow ended")
    }

    @Test func eachUserHasABoundedNumberOfSignInsUnderWay() async throws {
        let h = try await harness()
        for _ in 0..<PendingSignIns.capacityPerProgram { _ = try await h.sessions.beginSignIn(oidcRequest(account: "ada"), owner: Self.owner) }
        #expect(await vaultErrorCode { _ = try await h.sessions.beginSignIn(oidcRequest(account: "ada"), owner: Self.owner) } == .unavailable)
        _ = try await h.sessions.beginSignIn(oidcRequest(account: "ada"), owner: Self.owner + 1)
        h.clock.advance(by: 301)
        _ = try await h.sessions.beginSignIn(oidcRequest(account: "ada"), owner: Self.owner)  // the expired ones made room
    }

    @Test func anOAuth2SignInNeedsItsAccountAndAuthorizationEndpoint() async throws {
        let h = try await harness()
        var settings = ProviderSettings(kind: .oauth2, tokenEndpoint: tokenEndpoint, clientID: "sorted-cli")
        let request = SignInRequest(service: "com.sorted.app", account: nil, settings: settings, flow: .paste,
                                    redirectURI: Self.redirect, scopes: [])
        #expect(await vaultErrorCode { _ = try await h.sessions.beginSignIn(request, owner: Self.owner) } == .invalidArgument)
        var withAccount = request
        withAccount.account = "ada"
        #expect(await vaultErrorCode { _ = try await h.sessions.beginSignIn(withAccount, owner: Self.owner) } == .invalidArgument)
        settings.authorizationEndpoint = URL(string: "https://auth.example.test/authorize?prompt=login")!
        withAccount.settings = settings
        let start = try await h.sessions.beginSignIn(withAccount, owner: Self.owner)
        #expect(start.authorizationURL.absoluteString.hasPrefix("https://auth.example.test/authorize?prompt=login&response_type=code&"))
        #expect(parameter("nonce", of: start.authorizationURL) == nil, "no nonce without OpenID Connect")
    }

    @Test(arguments: ["http://192.0.2.1/cb", "https://example.test/cb#x", "ftp://127.0.0.1/cb"])
    func aRedirectURIThatCouldLeakTheCodeIsRefused(_ uri: String) async throws {
        let h = try await harness()
        var request = oidcRequest(account: "ada")
        request.redirectURI = URL(string: uri)!
        #expect(await vaultErrorCode { _ = try await h.sessions.beginSignIn(request, owner: Self.owner) } == .invalidArgument)
    }

    @Test func aDeviceSignInWithAnIssuerThatOffersNoDeviceEndpointSaysSo() async throws {
        let h = try await harness()
        var request = oidcRequest(account: "ada")
        request.flow = .device
        let error = await #expect(throws: VaultError.self) { _ = try await h.sessions.beginSignIn(request, owner: Self.owner) }
        #expect(error?.code == .invalidArgument && error?.description.contains("names no device_authorization_endpoint") == true,
                "\(String(describing: error))")
    }
}

extension SessionHarness {
    /// Completes `start` with code `the-code`, the scripted token endpoint answering for `nonce`.
    static func completing(_ h: SessionHarness, _ start: SignInStart, state: String, nonce: String) async throws -> SessionHarness {
        h.transport.enqueue(SignInTests.answer(nonce: nonce))
        _ = try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure("code=the-code&state=\(state)"), owner: SignInTests.owner)
        return h
    }
}

/// GoTrue's PKCE flow (`--kind supabase --provider github`) against a scripted GoTrue.
@Suite(.timeLimit(.minutes(20))) struct GoTrueSignInTests {
    @Test func theURLIsGoTruesAuthorizeWithTheStateInRedirectToAndTheCodeIsExchangedWithTheVerifier() async throws {
        let h = try SessionHarness([.tokens(access: "A1", refresh: "R1")])
        let settings = ProviderSettings(kind: .supabase, url: URL(string: "https://abc.supabase.test")!, apiKey: secure("anon-key"),
                                        externalProvider: "github")
        let start = try await h.sessions.beginSignIn(
            SignInRequest(service: "com.sorted.app", account: "ada", settings: settings, flow: .browser,
                          redirectURI: SignInTests.redirect, scopes: []), owner: SignInTests.owner)
        let items = URLComponents(url: start.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func item(_ name: String) -> String? { items.first { $0.name == name }?.value }
        #expect(start.authorizationURL.absoluteString.hasPrefix("https://abc.supabase.test/auth/v1/authorize?"))
        #expect(item("provider") == "github" && item("code_challenge_method") == "s256")
        let back = try #require(item("redirect_to").flatMap(URLComponents.init(string:)))
        #expect(back.path == "/cb")
        let state = try #require(back.queryItems?.first { $0.name == "state" }?.value)
        let result = try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure("state=\(state)&code=the-code"), owner: SignInTests.owner)
        let exchange = try #require(h.transport.requests.first)
        #expect(exchange.sentURL.absoluteString == "https://abc.supabase.test/auth/v1/token?grant_type=pkce")
        #expect(exchange.headers["apikey"] == "anon-key" && exchange.json("auth_code") == "the-code")
        let verifier = try #require(exchange.json("code_verifier"))
        #expect(text(secure(verifier).sha256().base64URLEncoded()) == item("code_challenge"))
        #expect(result.key.account == "ada")
    }

    /// GoTrue's session answer (token.go): the user with its id and, once confirmed, its e-mail.
    static func session(confirmed: Bool) -> ScriptedOAuthTransport.Reply {
        let user = #"{"id":"8c1e0f5a-user","aud":"authenticated","email":"ada@example.com","email_confirmed_at":"# + (confirmed ? #""2026-11-26T09:00:00Z""# : "null") + "}"
        return .answer(status: 200, body: #"{"access_token":"A1","token_type":"bearer","expires_in":3600,"refresh_token":"R1","user":"# + user + "}")
    }

    @Test(arguments: [true, false])
    func withoutAnAccountTheSignInIsStoredUnderTheVerifiedEmailElseTheUserID(confirmed: Bool) async throws {
        let h = try SessionHarness([Self.session(confirmed: confirmed)])
        let settings = ProviderSettings(kind: .supabase, url: URL(string: "https://abc.supabase.test")!, apiKey: secure("anon-key"),
                                        externalProvider: "github")
        let start = try await h.sessions.beginSignIn(
            SignInRequest(service: "com.sorted.app", account: nil, settings: settings, flow: .browser,
                          redirectURI: SignInTests.redirect, scopes: []), owner: SignInTests.owner)
        let back = try #require(URLComponents(url: start.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name == "redirect_to" }?.value.flatMap(URLComponents.init(string:)))
        let state = try #require(back.queryItems?.first { $0.name == "state" }?.value)
        let result = try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure("state=\(state)&code=the-code"), owner: SignInTests.owner)
        #expect(result.key.account == (confirmed ? "ada@example.com" : "8c1e0f5a-user"))
        #expect(result.status.userID == "8c1e0f5a-user")
    }
}
