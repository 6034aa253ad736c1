import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// Where an app's own web view may have the code sent (RFC 8252 §7.1 private-use schemes, claimed
/// https, loopback), and what stays refused, for the app flow and for the browser and paste flows.
@Suite(.timeLimit(.minutes(20))) struct AppRedirectURITests {
    func begin(_ uri: String, flow: SignInFlow) async throws -> VaultError.Code? {
        let h = try await SignInTests().harness()
        var request = SignInTests().oidcRequest(account: "ada")
        request.flow = flow
        request.redirectURI = try #require(URL(string: uri))
        return await vaultErrorCode { _ = try await h.sessions.beginSignIn(request, owner: SignInTests.owner) }
    }

    @Test(arguments: ["com.example.app:/oauth2redirect", "com.googleusercontent.apps.123-abc:/oauth2redirect",
                      "Com.Example.App:/callback?from=app", "com.example.app://auth/callback",
                      "https://app.example.test/signed-in", "http://127.0.0.1:40000/cb"])
    func anAppsWebViewMayCatchAPrivateUseSchemeOrAClaimedHTTPSOrLoopbackURI(_ uri: String) async throws {
        #expect(try await begin(uri, flow: .app) == nil)
    }

    @Test(arguments: ["javascript:alert(1)", "data:text/html,hello", "file:///tmp/cb", "myapp:/oauth2redirect",
                      "com.example.app:/cb#fragment", "com.example.app://ada@auth/cb", "com..app:/cb",
                      "com.example.:/cb", "http://192.0.2.1/cb", "https://example.test/cb#x"])
    func anAppsRedirectThatCouldHandTheCodeToSomethingElseIsRefused(_ uri: String) async throws {
        #expect(try await begin(uri, flow: .app) == .invalidArgument)
    }

    @Test(arguments: [SignInFlow.browser, .paste])
    func browserAndPasteSignInsRefuseAPrivateUseScheme(_ flow: SignInFlow) async throws {
        #expect(try await begin("com.example.app:/oauth2redirect", flow: flow) == .invalidArgument)
        #expect(try await begin("http://127.0.0.1:40000/cb", flow: flow) == nil)
    }
}
