import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// What an app tells sortedvault about its provider at sign-in, for any ``ProviderKind``: the
/// `Provider` parameter of Save and the options of `session save`. Everything but `oidc` turns into
/// an ``OAuthProvider`` at once (``resolved()``); an `oidc` provider needs its issuer's discovery
/// document first (the daemon fetches it).
///
/// ```swift
/// var settings = ProviderSettings(kind: .supabase)
/// settings.url = URL(string: "https://abc.supabase.co")
/// settings.apiKey = anonKey
/// ```
public struct ProviderSettings: Sendable, CustomStringConvertible {
    public var kind: ProviderKind
    public var tokenEndpoint: URL?
    public var revocationEndpoint: URL?
    public var clientID: String?
    public var clientSecret: SecureBytes?
    public var clientAuthentication: OAuthProvider.ClientAuthentication
    /// `oidc`: the issuer whose discovery document names the endpoints.
    public var issuer: URL?
    /// `supabase`: the project URL; `firebase`: the securetoken base (the real service unless given).
    public var url: URL?
    /// `firebase`: the Web API key; `supabase`: the anon key.
    public var apiKey: SecureBytes?
    /// `oauth2`: where a browser sign-in starts (`oidc` reads it from discovery). Used to begin a
    /// sign-in only; a stored login does not keep it.
    public var authorizationEndpoint: URL?
    /// `oauth2`: where a device sign-in (RFC 8628) asks for its code (`oidc` reads it from
    /// discovery). Used to begin a sign-in only, as ``authorizationEndpoint``.
    public var deviceAuthorizationEndpoint: URL?
    /// `supabase`: the external provider a browser sign-in goes through with GoTrue's PKCE flow
    /// (e.g. `github`). Used to begin a sign-in only.
    public var externalProvider: String?

    public init(kind: ProviderKind = .oauth2, tokenEndpoint: URL? = nil, revocationEndpoint: URL? = nil, clientID: String? = nil,
                clientSecret: SecureBytes? = nil, clientAuthentication: OAuthProvider.ClientAuthentication = .basic,
                issuer: URL? = nil, url: URL? = nil, apiKey: SecureBytes? = nil, authorizationEndpoint: URL? = nil,
                deviceAuthorizationEndpoint: URL? = nil, externalProvider: String? = nil) {
        self.authorizationEndpoint = authorizationEndpoint
        self.externalProvider = externalProvider
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.kind = kind
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clientAuthentication = clientAuthentication
        self.issuer = issuer
        self.url = url
        self.apiKey = apiKey
    }

    /// The settings of a provider already made (for the Swift API that takes an ``OAuthProvider``).
    public init(_ provider: OAuthProvider) {
        self.init(kind: provider.kind, clientAuthentication: provider.clientAuthentication)
        switch provider.kind {
        case .oauth2:
            tokenEndpoint = provider.tokenEndpoint
            revocationEndpoint = provider.revocationEndpoint
            clientID = provider.clientID
            clientSecret = provider.clientSecret
        case .oidc:
            // The endpoints are the discovery document's, looked up again by whoever resolves these.
            clientID = provider.clientID
            clientSecret = provider.clientSecret
            issuer = provider.issuer
        case .firebase:
            url = provider.baseURL
            apiKey = provider.apiKey
        case .supabase:
            url = provider.baseURL
            apiKey = provider.apiKey
        }
    }

    /// The provider, for every kind but `oidc`; an error that names the missing or unneeded option.
    public func resolved() throws -> OAuthProvider {
        try checkOnlyNeeded()
        switch kind {
        case .oauth2:
            guard let tokenEndpoint else { throw VaultError.invalidArgument("an oauth2 provider needs its token endpoint") }
            guard let clientID else { throw VaultError.invalidArgument("an oauth2 provider needs its client id") }
            return try OAuthProvider(tokenEndpoint: tokenEndpoint, revocationEndpoint: revocationEndpoint, clientID: clientID,
                                     clientSecret: clientSecret, clientAuthentication: clientAuthentication)
        case .firebase:
            guard let apiKey else { throw VaultError.invalidArgument("a firebase provider needs the project's Web API key") }
            return try OAuthProvider.firebase(apiKey: apiKey, securetokenBase: url ?? OAuthProvider.firebaseSecuretoken)
        case .supabase:
            guard let url else { throw VaultError.invalidArgument("a supabase provider needs the project URL (https://PROJECT.supabase.co)") }
            guard let apiKey else { throw VaultError.invalidArgument("a supabase provider needs the project's anon key") }
            return try OAuthProvider.supabase(projectURL: url, apiKey: apiKey)
        case .oidc:
            throw VaultError.invalidArgument("an oidc provider is resolved from its issuer's discovery document by the daemon")
        }
    }

    /// A setting another kind uses is an error, so a mistyped kind is not silently a different login.
    func checkOnlyNeeded() throws {
        var unneeded: [String] = []
        let endpoints = kind == .oauth2
        let client = kind == .oauth2 || kind == .oidc
        if tokenEndpoint != nil && !endpoints { unneeded.append("token endpoint") }
        if revocationEndpoint != nil && !endpoints { unneeded.append("revocation endpoint") }
        if authorizationEndpoint != nil && !endpoints { unneeded.append("authorization endpoint") }
        if deviceAuthorizationEndpoint != nil && !endpoints { unneeded.append("device authorization endpoint") }
        if externalProvider != nil && kind != .supabase { unneeded.append("external provider") }
        if clientID != nil && !client { unneeded.append("client id") }
        if clientSecret != nil && !client { unneeded.append("client secret") }
        if issuer != nil && kind != .oidc { unneeded.append("issuer") }
        if url != nil && kind != .firebase && kind != .supabase { unneeded.append("url") }
        if apiKey != nil && kind != .firebase && kind != .supabase { unneeded.append("API key") }
        if !unneeded.isEmpty {
            throw VaultError.invalidArgument("a \(kind) provider takes no \(unneeded.joined(separator: ", ")); check the kind")
        }
    }

    public var description: String {
        "ProviderSettings(\(kind), secret: \(clientSecret == nil ? "none" : "<redacted>"), api key: \(apiKey == nil ? "none" : "<redacted>"))"
    }
}
