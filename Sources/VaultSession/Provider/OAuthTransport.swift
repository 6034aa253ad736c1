import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// A named value that is a secret (an API key in a header or in the query): kept in secure memory
/// until the transport sends it.
public struct SecretParameter: Sendable {
    public var name: String
    public var value: SecureBytes

    public init(name: String, value: SecureBytes) {
        self.name = name
        self.value = value
    }
}

/// One POST to a provider endpoint. The body holds tokens and perhaps the client secret, so it
/// lives in secure memory; so do the `Authorization` header value, secret headers (Supabase's
/// `apikey`) and secret query parameters (Firebase's `key`).
///
/// `url` never holds a secret: it is the one address that may appear in text. Secret query
/// parameters are joined to it only by the transport, at the moment of sending (``sendURL()``).
public struct OAuthHTTPRequest: Sendable {
    /// How the body is encoded.
    public enum BodyFormat: String, Sendable {
        /// `application/x-www-form-urlencoded` (RFC 6749, Firebase's securetoken).
        case form
        /// `application/json` (GoTrue).
        case json

        public var contentType: String {
            switch self {
            case .form: return "application/x-www-form-urlencoded"
            case .json: return "application/json"
            }
        }
    }

    public var url: URL
    public var body: SecureBytes
    public var bodyFormat: BodyFormat
    /// The whole `Authorization` header value: `Basic …` for client authentication, `Bearer …`
    /// where a token authenticates the call.
    public var authorization: SecureBytes?
    /// Extra headers whose values are secrets.
    public var secretHeaders: [SecretParameter]
    /// Query parameters whose values are secrets, appended to `url`'s query when sending.
    public var secretQuery: [SecretParameter]

    public init(url: URL, body: SecureBytes, authorization: SecureBytes? = nil, bodyFormat: BodyFormat = .form,
                secretHeaders: [SecretParameter] = [], secretQuery: [SecretParameter] = []) {
        self.url = url
        self.body = body
        self.bodyFormat = bodyFormat
        self.authorization = authorization
        self.secretHeaders = secretHeaders
        self.secretQuery = secretQuery
    }

    /// The URL to send, secret query parameters included. For the transport only: never log it,
    /// never put it in an error; report `url` (or its host) instead.
    public func sendURL() -> URL {
        guard !secretQuery.isEmpty else { return url }
        var text = url.absoluteString
        for parameter in secretQuery {
            text += (text.contains("?") ? "&" : "?") + FormBody.encode(Array(parameter.name.utf8)) + "="
            text += parameter.value.withUnsafeBytes { FormBody.encodeSecure($0) }.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        }
        return URL(string: text) ?? url
    }
}

/// What a provider answered: its status and at most ``OAuthHTTPResponse/maximumBodyBytes`` of body.
public struct OAuthHTTPResponse: Sendable {
    public var status: Int
    public var body: SecureBytes

    /// Larger answers are cut off and treated as a failed request.
    public static let maximumBodyBytes = TokenResponse.maximumBytes

    public init(status: Int, body: SecureBytes) {
        self.status = status
        self.body = body
    }
}

/// A failure to get any answer from the provider: it is down or unreachable, or too slow. Never a
/// reason to delete anything.
public struct OAuthTransportError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// Whether the provider may have received (and acted on) the request: the deadline passed or
    /// the connection broke after sending. A refresh answer lost this way may have rotated the
    /// refresh token, so the login is "in doubt" (docs/sessions-core.md, "Refresh lease"). False
    /// only when the request certainly never left (no route, name not found, connection refused).
    public let requestMayHaveArrived: Bool

    public init(_ description: String, requestMayHaveArrived: Bool = true) {
        self.description = description
        self.requestMayHaveArrived = requestMayHaveArrived
    }
}

/// How sessions reach providers. `VaultOAuthHTTP.HTTPClientTransport` is the real one; tests of
/// logic may script one.
///
/// Conformers POST the body with the request's content type and `Accept: application/json`, send
/// its secret headers and secret query parameters, never follow redirects, bound the time a request
/// takes and the size of the answer, throw ``OAuthTransportError`` when no HTTP answer came back,
/// and never put ``OAuthHTTPRequest/sendURL()`` or a secret value into an error or a log.
public protocol OAuthTransport: Sendable {
    func post(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse
    /// The most one request may take in all, connection included, in seconds: a refresh lease is
    /// at least twice as long, so no holder is overtaken while it still waits for its answer.
    var requestDeadline: TimeInterval { get }
}
