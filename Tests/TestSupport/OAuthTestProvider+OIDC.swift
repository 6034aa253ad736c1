import BoundedJSON
import Foundation
import VaultCrypto

/// The test provider's OpenID Connect side: its issuer, id tokens from the password grant with
/// scope `openid`, a second client (another audience), and key rotation.
extension OAuthTestProvider {
    public static let otherClientID = "sorted-other"
    public static let otherClientSecret = "sorted-other-secret"

    /// `http://127.0.0.1:PORT/o`: what the provider's discovery document and id tokens name.
    public var issuer: URL { URL(string: base + "/o")! }

    /// Signs ada in with scope `openid` as `client` (by default `sorted-app`): the whole token
    /// response, whose `id_token` is a fresh RS256 id token.
    public func signInWithOpenID(client: (id: String, secret: String) = (clientID, clientSecret)) async throws -> [UInt8] {
        let (status, body) = try await post("/o/token/", form: [
            "grant_type": "password", "username": "ada", "password": "correct horse battery", "scope": "openid read write",
        ], client: client)
        guard status == 200 else { throw HarnessError("password grant with openid failed with HTTP \(status)") }
        return body
    }

    /// A fresh id token for ada, in secure memory, as a client app would hand it over.
    public func idToken(client: (id: String, secret: String) = (clientID, clientSecret)) async throws -> SecureBytes {
        guard let token = try await signInWithOpenID(client: client).jsonField("id_token") else {
            throw HarnessError("the provider answered no id_token")
        }
        return SecureBytes(copying: Array(token.utf8))
    }

    /// ada's user id at the provider: what a verified id token's `sub` must say.
    public var userSubject: String { "1" }

    /// `/test/rotate-key`: a new signing key (new `kid`); the old one stays published but signs nothing.
    public func rotateSigningKey() async throws {
        try await control("/test/rotate-key")
    }

    /// How many times the discovery document and the key set were fetched.
    public func documentRequests() async throws -> (discovery: Int, keys: Int) {
        let stats = try await stats()
        return (Int(stats["discovery_requests"]?.intValue ?? -1), Int(stats["jwks_requests"]?.intValue ?? -1))
    }
}
