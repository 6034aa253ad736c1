import Foundation
import Testing
import VaultCore
import VaultSession

/// Tokens and client secrets go only over https, or plain http to this machine.
@Suite(.timeLimit(.minutes(20))) struct OAuthProviderEndpointTests {
    func code(_ endpoint: String) -> VaultError.Code? {
        vaultError { _ = try OAuthProvider(tokenEndpoint: URL(string: endpoint)!, clientID: "c") }?.code
    }

    @Test(arguments: [
        "https://auth.example.test/token", "https://auth.example.test:8443/oauth/token?tenant=a",
        "http://127.0.0.1:8080/token", "http://127.1.2.3/token", "http://localhost:9000/token", "http://[::1]:9000/token",
    ])
    func acceptedEndpoints(_ endpoint: String) {
        #expect(code(endpoint) == nil)
    }

    @Test(arguments: [
        "http://auth.example.test/token",
        "http://127.evil.example/token",
        "http://127.0.0.1.evil.example/token",
        "http://localhost.evil.example/token",
        "ftp://auth.example.test/token",
        "https://user:pass@auth.example.test/token",
        "https://auth.example.test/token#fragment",
        "/relative/token",
    ])
    func refusedEndpoints(_ endpoint: String) {
        #expect(code(endpoint) == .invalidArgument)
    }

    @Test func theRevocationEndpointIsCheckedToo() {
        let error = vaultError {
            _ = try OAuthProvider(tokenEndpoint: URL(string: "https://auth.example.test/token")!,
                                  revocationEndpoint: URL(string: "http://127.evil.example/revoke")!, clientID: "c")
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: ["", "bad\nid", String(repeating: "c", count: 1025)])
    func badClientIDsAreRefused(_ clientID: String) {
        #expect(vaultError { _ = try OAuthProvider(tokenEndpoint: URL(string: "https://a.test/t")!, clientID: clientID) }?.code
                == .invalidArgument)
    }
}
