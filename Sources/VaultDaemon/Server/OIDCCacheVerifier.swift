import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto
import VaultOIDC
import VaultSession

/// The session manager's OpenID Connect checks, done by the daemon's one ``OIDCProviderCache``
/// (discovery documents and key sets cached, re-fetched on a key-id miss).
struct OIDCCacheVerifier: OpenIDVerifier {
    let cache: OIDCProviderCache

    func endpoints(of issuer: URL) async throws(OpenIDVerificationError) -> OpenIDEndpoints {
        do {
            let document = try await cache.discovery(for: issuer)
            return OpenIDEndpoints(token: document.tokenEndpoint, revocation: document.revocationEndpoint,
                                   authorization: document.authorizationEndpoint,
                                   deviceAuthorization: document.deviceAuthorizationEndpoint)
        } catch {
            throw Self.converted(error)
        }
    }

    func verifiedSubject(of idToken: SecureBytes, issuer: URL, clientID: String,
                         nonce: SecureBytes?) async throws(OpenIDVerificationError) -> String {
        do {
            return try await cache.verifyIDToken(idToken, issuer: issuer, clientID: clientID, nonce: nonce).subject
        } catch {
            throw Self.converted(error)
        }
    }

    private static func converted(_ error: OIDCError) -> OpenIDVerificationError {
        error.code.isTransient ? .unreachable(error.reason) : .refused("\(error.code.name): \(error.reason)")
    }
}
