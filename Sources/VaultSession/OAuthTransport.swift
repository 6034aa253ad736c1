import Foundation
import VaultCrypto

/// One form POST to a provider endpoint. The body holds tokens and perhaps the client secret, so it
/// lives in secure memory; so does the `Authorization` header value.
public struct OAuthHTTPRequest: Sendable {
    public var url: URL
    public var body: SecureBytes
    /// `Authorization: Basic …` when the client authenticates that way.
    public var authorization: SecureBytes?

    public init(url: URL, body: SecureBytes, authorization: SecureBytes? = nil) {
        self.url = url
        self.body = body
        self.authorization = authorization
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
    public init(_ description: String) { self.description = description }
}

/// How sessions reach providers. `VaultOAuthHTTP.URLSessionTransport` is the real one; tests of
/// logic may script one.
///
/// Conformers POST `application/x-www-form-urlencoded` with `Accept: application/json`, never
/// follow redirects, bound the time a request takes and the size of the answer, and throw
/// ``OAuthTransportError`` when no HTTP answer came back.
public protocol OAuthTransport: Sendable {
    func post(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse
}
