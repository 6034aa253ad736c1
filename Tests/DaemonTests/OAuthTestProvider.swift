import Varlink
import Foundation
import TestSupport
import VaultCrypto
import VaultSession

/// A real OAuth2 provider for the tests: django-oauth-toolkit (`Tests/Support/oauth-provider`) run by
/// the shared `ProviderServer` launcher. It has user `ada` and the confidential client `sorted-app`,
/// rotates refresh tokens, rejects a reused one, revokes (RFC 7009) and introspects (RFC 7662);
/// `/test/…` lets a test count requests, fail or hold answers (see `ProviderServer+Controls`).
final class OAuthTestProvider: ProviderServer, @unchecked Sendable {
    static let clientID = "sorted-app"
    static let clientSecret = "sorted-app-secret"

    init() throws {
        try super.init(.oauth2)
    }

    var revocationEndpoint: URL { URL(string: base + "/o/revoke_token/")! }

    /// The provider settings a client app saves with its login.
    func provider(authentication: OAuthProvider.ClientAuthentication = .basic, revocation: Bool = true) throws -> OAuthProvider {
        try OAuthProvider(tokenEndpoint: tokenEndpoint, revocationEndpoint: revocation ? revocationEndpoint : nil,
                          clientID: Self.clientID, clientSecret: SecureBytes(copying: Array(Self.clientSecret.utf8)),
                          clientAuthentication: authentication)
    }

    /// Whether the provider's introspection (RFC 7662) says the token is active.
    func isActive(_ token: String) async throws -> Bool {
        let (status, body) = try await post("/o/introspect/", form: ["token": token], headers: ["Authorization": Self.basic])
        guard status == 200, case .object(let object) = try JSONValue.parse(body) else {
            throw HarnessError("introspection failed with HTTP \(status)")
        }
        return object["active"]?.boolValue ?? false
    }

    /// Tries a refresh token directly: the provider's HTTP status and `error`.
    func tryRefresh(_ refreshToken: String) async throws -> (Int, String?) {
        let (status, body) = try await refreshDirectly(refreshToken)
        return (status, (try? JSONValue.parse(body))?.objectValue?["error"]?.stringValue)
    }

    private static var basic: String { "Basic " + Data("\(clientID):\(clientSecret)".utf8).base64EncodedString() }
}

extension Array where Element == UInt8 {
    /// A string field of a JSON object (test helper for token responses).
    func jsonField(_ name: String) -> String? {
        (try? JSONValue.parse(self))?.objectValue?[name]?.stringValue
    }
}
