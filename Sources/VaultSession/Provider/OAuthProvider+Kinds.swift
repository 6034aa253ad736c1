import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// The providers that are not plain RFC 6749: each made from what its app already knows.
///
/// ```swift
/// let firebase = try OAuthProvider.firebase(apiKey: webAPIKey)
/// let emulator = try OAuthProvider.firebase(apiKey: webAPIKey,
///     securetokenBase: URL(string: "http://127.0.0.1:9099/securetoken.googleapis.com")!)
/// let supabase = try OAuthProvider.supabase(projectURL: URL(string: "https://abc.supabase.co")!, apiKey: anonKey)
/// ```
///
/// The API key never goes into a URL stored here or shown anywhere: the Firebase key is joined to
/// the request only as a secret query parameter, the Supabase key only as a secret header.
extension OAuthProvider {
    /// Google's securetoken service; point `securetokenBase` at the Auth emulator
    /// (`http://127.0.0.1:PORT/securetoken.googleapis.com`) to test against it.
    public static let firebaseSecuretoken = URL(string: "https://securetoken.googleapis.com")!

    /// A Firebase Auth login: refreshed at `{securetokenBase}/v1/token?key=API_KEY`.
    public static func firebase(apiKey: SecureBytes, securetokenBase: URL = firebaseSecuretoken) throws -> OAuthProvider {
        let base = try baseURL(securetokenBase, what: "Firebase securetoken URL")
        return try OAuthProvider(kind: .firebase, tokenEndpoint: base.appending(path: "v1/token"), revocationEndpoint: nil,
                                 clientID: "", clientSecret: nil, clientAuthentication: .basic, apiKey: apiKey, issuer: nil)
    }

    /// A Supabase Auth login: refreshed at `{projectURL}/auth/v1/token?grant_type=refresh_token`,
    /// logged out at `{projectURL}/auth/v1/logout?scope=local`, with `apiKey` (the anon key) as `apikey`.
    public static func supabase(projectURL: URL, apiKey: SecureBytes) throws -> OAuthProvider {
        let base = try baseURL(projectURL, what: "Supabase project URL")
        return try OAuthProvider(kind: .supabase, tokenEndpoint: base.appending(path: "auth/v1/token"),
                                 revocationEndpoint: base.appending(path: "auth/v1/logout"), clientID: "", clientSecret: nil,
                                 clientAuthentication: .basic, apiKey: apiKey, issuer: nil)
    }

    /// An OpenID Connect login at the endpoints `issuer`'s discovery document names.
    public static func oidc(issuer: URL, tokenEndpoint: URL, revocationEndpoint: URL?, clientID: String,
                            clientSecret: SecureBytes? = nil, clientAuthentication: ClientAuthentication = .basic) throws -> OAuthProvider {
        try checkEndpoint(issuer, what: "issuer")
        return try OAuthProvider(kind: .oidc, tokenEndpoint: tokenEndpoint, revocationEndpoint: revocationEndpoint,
                                 clientID: clientID, clientSecret: clientSecret, clientAuthentication: clientAuthentication,
                                 apiKey: nil, issuer: issuer)
    }

    /// Every kind's checks in one place, also used when a stored record or a backup's login is read back.
    public init(kind: ProviderKind, tokenEndpoint: URL, revocationEndpoint: URL?, clientID: String, clientSecret: SecureBytes?,
         clientAuthentication: ClientAuthentication, apiKey: SecureBytes?, issuer: URL?) throws {
        switch kind {
        case .oauth2, .oidc:
            try self.init(tokenEndpoint: tokenEndpoint, revocationEndpoint: revocationEndpoint, clientID: clientID,
                          clientSecret: clientSecret, clientAuthentication: clientAuthentication)
            if kind == .oidc {
                guard let issuer else { throw VaultError.invalidArgument("an OpenID Connect login needs its issuer") }
                try Self.checkEndpoint(issuer, what: "issuer")
            }
        case .firebase, .supabase:
            guard let apiKey else {
                throw VaultError.invalidArgument(kind == .firebase ? "a Firebase login needs the project's Web API key"
                                                                   : "a Supabase login needs the project's anon key")
            }
            try Self.checkAPIKey(apiKey)
            // The endpoint checks are the RFC 6749 ones; these kinds have no client id.
            self = try OAuthProvider(tokenEndpoint: tokenEndpoint, revocationEndpoint: revocationEndpoint, clientID: kind.rawValue)
            self.clientID = ""
        }
        self.kind = kind
        self.apiKey = kind == .firebase || kind == .supabase ? apiKey : nil
        self.issuer = kind == .oidc ? issuer : nil
    }

    /// An API key goes into a header or a query as it is: 1 to 4096 visible ASCII bytes.
    static func checkAPIKey(_ key: SecureBytes) throws {
        let fits = key.withUnsafeBytes { raw in raw.count > 0 && raw.count <= 4096 && raw.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
        guard fits else {
            throw VaultError.invalidArgument("the API key must be 1 to 4096 visible ASCII characters (no spaces or line breaks)")
        }
    }

    /// A base URL to append paths to: checked like an endpoint, no query, no trailing slash.
    private static func baseURL(_ url: URL, what: String) throws -> URL {
        try checkEndpoint(url, what: what)
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.query == nil else {
            throw VaultError.invalidArgument("the \(what) must not carry a query")
        }
        while components.path.hasSuffix("/") { components.path.removeLast() }
        guard let trimmed = components.url else { throw VaultError.invalidArgument("the \(what) is not a URL") }
        return trimmed
    }
}

extension OAuthProvider {
    /// Firebase's securetoken base or Supabase's project URL, as given at sign-in; nil for other kinds.
    public var baseURL: URL? {
        let suffix: String
        switch kind {
        case .firebase: suffix = "/v1/token"
        case .supabase: suffix = "/auth/v1/token"
        case .oauth2, .oidc: return nil
        }
        let text = tokenEndpoint.absoluteString
        guard text.hasSuffix(suffix) else { return nil }
        return URL(string: String(text.dropLast(suffix.count)))
    }
}
