import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Where and how a session is refreshed and revoked: the provider's endpoints and this app's client
/// credentials (RFC 6749 §2.3). Stored with the session, sealed like every secret.
///
/// ```swift
/// let provider = try OAuthProvider(
///     tokenEndpoint: URL(string: "https://auth.sorted.app/oauth/token")!,
///     revocationEndpoint: URL(string: "https://auth.sorted.app/oauth/revoke")!,
///     clientID: "sorted-desktop")
/// ```
///
/// Endpoints must be `https`, or `http` to a loopback address (a provider on this machine). Requests
/// never follow redirects, so client credentials and tokens go only where they were configured to go.
public struct OAuthProvider: Sendable, Equatable, CustomStringConvertible {
    /// How the client authenticates at the token and revocation endpoints (RFC 6749 §2.3.1).
    public enum ClientAuthentication: String, Sendable, CaseIterable {
        /// `Authorization: Basic` with the form-encoded client id and secret; what RFC 6749 requires
        /// every server to support. A client without a secret sends only `client_id` in the body.
        case basic
        /// `client_id` and `client_secret` in the request body (`client_secret_post`).
        case post
    }

    /// The protocol this login speaks (see ``ProviderKind``); `oauth2` unless made by
    /// ``firebase(apiKey:securetokenBase:)``, ``supabase(projectURL:apiKey:)`` or ``oidc(issuer:discovered:clientID:clientSecret:clientAuthentication:)``.
    public internal(set) var kind: ProviderKind = .oauth2
    public var tokenEndpoint: URL
    public var revocationEndpoint: URL?
    /// The OAuth2 client id; empty for Firebase and Supabase, which have none.
    public var clientID: String
    /// The client secret of a confidential client; nil for a public client.
    public var clientSecret: SecureBytes?
    public var clientAuthentication: ClientAuthentication
    /// Firebase's Web API key or Supabase's anon key: not a user credential, but kept as a secret
    /// (sealed, never in text) because it lets anyone call the project's auth API.
    public internal(set) var apiKey: SecureBytes?
    /// The OpenID Connect issuer whose tokens this login accepts.
    public internal(set) var issuer: URL?

    public init(tokenEndpoint: URL, revocationEndpoint: URL? = nil, clientID: String, clientSecret: SecureBytes? = nil,
                clientAuthentication: ClientAuthentication = .basic) throws {
        try Self.checkEndpoint(tokenEndpoint, what: "token endpoint")
        if let revocationEndpoint { try Self.checkEndpoint(revocationEndpoint, what: "revocation endpoint") }
        guard !clientID.isEmpty, clientID.utf8.count <= 1024, clientID.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
            throw VaultError.invalidArgument("the client id must be 1 to 1024 bytes without control characters")
        }
        if let clientSecret, clientSecret.count > 4096 {
            throw VaultError.invalidArgument("the client secret is longer than 4096 bytes")
        }
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clientAuthentication = clientAuthentication
    }

    /// Accepts `https` anywhere and `http` only on loopback; no user info, no fragment.
    static func checkEndpoint(_ url: URL, what: String) throws {
        try SecureEndpoint.check(url, what: what)
    }

    public static func == (lhs: OAuthProvider, rhs: OAuthProvider) -> Bool {
        lhs.kind == rhs.kind && lhs.issuer == rhs.issuer && lhs.apiKey == rhs.apiKey && lhs.tokenEndpoint == rhs.tokenEndpoint && lhs.revocationEndpoint == rhs.revocationEndpoint
            && lhs.clientID == rhs.clientID && lhs.clientAuthentication == rhs.clientAuthentication
            && lhs.clientSecret == rhs.clientSecret
    }

    public var description: String {
        "OAuthProvider(\(kind), \(tokenEndpoint.absoluteString), client: \(clientID.debugDescription), secret: \(clientSecret == nil ? "none" : "<redacted>")\(apiKey == nil ? "" : ", api key: <redacted>"))"
    }
}
