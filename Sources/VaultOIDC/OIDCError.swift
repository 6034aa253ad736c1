import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Why an OpenID Connect step failed: the discovery document, the key set, or an id token.
///
/// Compare by ``code``; show ``reason`` to the user. The reason says what happened and what to do;
/// it never holds the id token or any part of it (the token is a bearer secret), only names such as
/// the issuer URL, a key id or an algorithm.
///
/// ```swift
/// do { let token = try await cache.verifyIDToken(idToken, issuer: issuer, clientID: "sorted-app") }
/// catch let error as OIDCError where error.code.isTransient { /* offline: keep the login, retry later */ }
/// catch let error as OIDCError { /* refuse the login; error.reason says why */ }
/// ```
public struct OIDCError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a small extensible set: new codes do not break `switch`-less clients.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case discoveryUnreachable, malformedDocument, issuerMismatch
            case unknownKey, badSignature, unsupportedAlgorithm
            case wrongIssuer, wrongAudience, expired, notYetValid, malformedToken, wrongNonce
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The discovery document or key set could not be fetched (no answer, a timeout, HTTP 5xx or
        /// 429). Transient: the login is `offline`, nothing is deleted, try again later.
        public static let discoveryUnreachable = Code(.discoveryUnreachable)
        /// The discovery document or key set is not what OpenID Connect specifies: not JSON, a
        /// missing member, an endpoint that is not https, over the size cap, or HTTP 4xx.
        public static let malformedDocument = Code(.malformedDocument)
        /// The discovery document names another issuer than the configured one (Discovery §4.3).
        public static let issuerMismatch = Code(.issuerMismatch)
        /// No key in the provider's key set has the id token's `kid`, even after fetching it again.
        public static let unknownKey = Code(.unknownKey)
        /// The id token's signature does not verify with the provider's key: forged or damaged.
        public static let badSignature = Code(.badSignature)
        /// The id token is signed with an algorithm other than RS256 or ES256 (`none` and HS256
        /// among them), or with one that does not fit the key.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The id token's `iss` is not the configured issuer.
        public static let wrongIssuer = Code(.wrongIssuer)
        /// The id token was issued to another client (`aud`, `azp`).
        public static let wrongAudience = Code(.wrongAudience)
        /// The id token's `exp` has passed.
        public static let expired = Code(.expired)
        /// The id token's `iat` or `nbf` lies in the future: this machine's clock or the provider's is wrong.
        public static let notYetValid = Code(.notYetValid)
        /// The id token is not a compact JWS with the claims OpenID Connect requires.
        public static let malformedToken = Code(.malformedToken)
        /// The id token lacks the nonce the sign-in sent, or carries another: it was issued for
        /// another sign-in (replayed or injected).
        public static let wrongNonce = Code(.wrongNonce)

        /// True only for ``discoveryUnreachable``: the provider could not be asked, which says
        /// nothing about the login. Every other code is a refusal.
        public var isTransient: Bool { value == .discoveryUnreachable }

        /// A stable, machine-readable name such as `wrongAudience`.
        public var name: String { value.rawValue }
        public var description: String { value.rawValue }
    }

    public let code: Code
    /// What happened and what to do, in words safe to log.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    public static func == (lhs: OIDCError, rhs: OIDCError) -> Bool { lhs.code == rhs.code }
}

extension OIDCError {
    static func malformedToken(_ what: String) -> OIDCError {
        OIDCError(.malformedToken, "the id token is not usable: \(what); sign in again, and if it persists check the provider's OpenID Connect settings")
    }

    static func malformedDocument(_ url: URL, _ what: String) -> OIDCError {
        OIDCError(.malformedDocument, "the OpenID Connect document at \(url.absoluteString) is not usable: \(what); check the issuer URL and the provider's configuration")
    }

    /// What a ``OIDCDocumentFetcher`` throws when a document is larger than `limit` bytes.
    public static func documentTooLarge(_ url: URL, limit: Int) -> OIDCError {
        malformedDocument(url, "it is larger than \(limit) bytes")
    }
}
