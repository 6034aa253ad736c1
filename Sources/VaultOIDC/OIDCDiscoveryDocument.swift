import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// What a provider publishes at `ISSUER/.well-known/openid-configuration` (OpenID Connect Discovery
/// 1.0), reduced to what a login needs.
///
/// ```swift
/// let url = try OIDCDiscoveryDocument.discoveryURL(forIssuer: issuer)
/// let document = try OIDCDiscoveryDocument(parsing: body, expectedIssuer: issuer)
/// ```
///
/// The document's `issuer` must be the configured issuer, byte for byte (Discovery §4.3): otherwise
/// a document served for one provider could hand out another's endpoints and keys. Every endpoint must
/// pass ``SecureEndpoint/check(_:what:)``, the rule every OAuth2 endpoint passes, and be on the
/// issuer's own scheme, host and port (``sameOrigin(_:_:)``): an oidc login configures only its
/// issuer, so nothing else vouches for an endpoint elsewhere.
public struct OIDCDiscoveryDocument: Sendable, Equatable {
    /// The largest discovery document accepted, in bytes.
    public static let maximumBytes = 64 * 1024

    public let issuer: URL
    public let tokenEndpoint: URL
    /// Where a browser sign-in starts; absent for a provider that offers none (Discovery §3 requires
    /// it, but a provider used only for refresh may leave it out).
    public let authorizationEndpoint: URL?
    /// RFC 8628 §4: where a device sign-in starts, when the provider offers one.
    public let deviceAuthorizationEndpoint: URL?
    /// Absent when the provider offers no RFC 7009 revocation.
    public let revocationEndpoint: URL?
    public let jwksURI: URL
    /// `id_token_signing_alg_values_supported`, as published (OpenID Connect requires the member).
    public let idTokenSigningAlgorithms: [String]

    /// Parses the document fetched for `expectedIssuer`.
    public init(parsing body: some Collection<UInt8>, expectedIssuer: URL) throws(OIDCError) {
        let url = Self.documentURL(expectedIssuer)
        guard body.count <= Self.maximumBytes else { throw .documentTooLarge(url, limit: Self.maximumBytes) }
        guard let members = (try? JSONValue.parse(body, maxDepth: 16))?.objectValue else {
            throw .malformedDocument(url, "it is not a JSON object")
        }
        guard let issuer = members["issuer"]?.stringValue else { throw .malformedDocument(url, "it has no `issuer`") }
        guard Array(issuer.utf8) == Array(expectedIssuer.absoluteString.utf8) else {
            throw OIDCError(.issuerMismatch, "the discovery document at \(url.absoluteString) names the issuer \(issuer.debugDescription), not \(expectedIssuer.absoluteString.debugDescription): configure the issuer exactly as the provider names itself")
        }
        func endpoint(_ member: String, required: Bool = true) throws(OIDCError) -> URL? {
            guard let value = members[member] else {
                if required { throw .malformedDocument(url, "it has no `\(member)`") }
                return nil
            }
            guard let text = value.stringValue, let endpoint = URL(string: text) else {
                throw .malformedDocument(url, "`\(member)` is not a URL")
            }
            do {
                try SecureEndpoint.check(endpoint, what: member)
            } catch {
                throw .malformedDocument(url, "\(error)")
            }
            guard Self.sameOrigin(endpoint, expectedIssuer) else {
                throw OIDCError(.malformedDocument, "the discovery document at \(url.absoluteString) names `\(member)` at \(Self.origin(endpoint)), not at the issuer's \(Self.origin(expectedIssuer)): an endpoint on another scheme, host or port is refused (it could send sign-in codes and secrets to, or make requests into, another service); the issuer's administrator must serve its endpoints from the issuer's own host")
            }
            return endpoint
        }
        guard let algorithms = members["id_token_signing_alg_values_supported"]?.arrayValue,
              algorithms.allSatisfy({ $0.stringValue != nil }) else {
            throw .malformedDocument(url, "it has no `id_token_signing_alg_values_supported` list")
        }
        self.issuer = expectedIssuer
        self.tokenEndpoint = try endpoint("token_endpoint")!
        self.revocationEndpoint = try endpoint("revocation_endpoint", required: false)
        self.authorizationEndpoint = try endpoint("authorization_endpoint", required: false)
        self.deviceAuthorizationEndpoint = try endpoint("device_authorization_endpoint", required: false)
        self.jwksURI = try endpoint("jwks_uri")!
        self.idTokenSigningAlgorithms = algorithms.compactMap(\.stringValue)
    }

    /// Whether `endpoint` has the issuer's scheme, host (case-insensitively) and port (the scheme's
    /// default when none is written). Why: the issuer is the one thing the user configured; a
    /// document that could point the token, revocation or key requests anywhere (`http://127.0.0.1:
    /// 5432`, a host on the local network) would let whoever serves it make the daemon send
    /// blind requests, with the code, the PKCE verifier and the client secret, to any local service.
    static func sameOrigin(_ endpoint: URL, _ issuer: URL) -> Bool {
        endpoint.scheme?.lowercased() == issuer.scheme?.lowercased()
            && endpoint.host?.lowercased() == issuer.host?.lowercased()
            && effectivePort(endpoint) == effectivePort(issuer)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }

    /// `scheme://host:port` of a URL, for an error message.
    private static func origin(_ url: URL) -> String {
        "\(url.scheme ?? "?")://\(url.host ?? "?")" + (url.port.map { ":\($0)" } ?? "")
    }

    /// Where the discovery document of `issuer` lives, after checking the issuer itself: an
    /// https (or loopback http) URL with no query or fragment (Discovery §2).
    public static func discoveryURL(forIssuer issuer: URL) throws(OIDCError) -> URL {
        do {
            try SecureEndpoint.check(issuer, what: "issuer")
        } catch {
            throw OIDCError(.malformedDocument, "\(error): pass the provider's issuer URL, e.g. https://accounts.example.com")
        }
        guard issuer.query == nil else {
            throw OIDCError(.malformedDocument, "the issuer must not have a query: pass the provider's issuer URL, e.g. https://accounts.example.com")
        }
        return documentURL(issuer)
    }

    /// Discovery §4.1: remove a terminating `/`, then append `/.well-known/openid-configuration`.
    private static func documentURL(_ issuer: URL) -> URL {
        var text = issuer.absoluteString
        if text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/.well-known/openid-configuration") ?? issuer
    }
}
