import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// What an `oidc` login needs from OpenID Connect: the endpoints the issuer's discovery document
/// names, and a verified id token. `VaultSession` does no I/O and no JWT crypto of its own; the
/// daemon hands the manager one backed by `VaultOIDC.OIDCProviderCache`.
///
/// ```swift
/// await sessions.useOpenID(OIDCCacheVerifier(cache: cache))
/// ```
public protocol OpenIDVerifier: Sendable {
    /// The token, revocation and authorization endpoints of `issuer`'s discovery document.
    func endpoints(of issuer: URL) async throws(OpenIDVerificationError) -> OpenIDEndpoints
    /// Verifies the id token (signature from the issuer's keys, `iss`, `aud` = `clientID`, `exp`,
    /// and `nonce` when given: the sign-in's) and returns its `sub`.
    func verifiedSubject(of idToken: SecureBytes, issuer: URL, clientID: String,
                         nonce: SecureBytes?) async throws(OpenIDVerificationError) -> String
}

/// The endpoints an issuer's discovery document names.
public struct OpenIDEndpoints: Sendable, Equatable {
    public var token: URL
    public var revocation: URL?
    /// Where a browser sign-in starts; nil when the document names none.
    public var authorization: URL?
    /// Where a device sign-in (RFC 8628) starts; nil when the document names none.
    public var deviceAuthorization: URL?

    public init(token: URL, revocation: URL? = nil, authorization: URL? = nil, deviceAuthorization: URL? = nil) {
        self.token = token
        self.revocation = revocation
        self.authorization = authorization
        self.deviceAuthorization = deviceAuthorization
    }
}

/// Why an id token or a discovery document was not accepted.
public enum OpenIDVerificationError: Error, Sendable, CustomStringConvertible {
    /// The provider's documents could not be fetched: nothing is decided, try again later.
    case unreachable(String)
    /// The token (or the provider's document) is refused; the reason says which check failed.
    case refused(String)

    public var description: String {
        switch self {
        case .unreachable(let reason), .refused(let reason): return reason
        }
    }
}
