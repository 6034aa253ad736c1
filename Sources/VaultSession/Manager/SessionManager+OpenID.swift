import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// OpenID Connect logins (``OpenIDLogins``): endpoints from discovery at sign-in, and the id token
/// verified at sign-in and after every refresh; the login's user id is the verified `sub`.
extension SessionManager {
    /// Gives the manager what it needs for `oidc` logins; without it they are refused.
    public func useOpenID(_ verifier: any OpenIDVerifier) {
        openIDLogins.use(verifier)
    }

    /// The provider for `settings`: for `oidc`, its endpoints come from the issuer's discovery document.
    public func provider(for settings: ProviderSettings) async throws -> OAuthProvider {
        try await openIDLogins.resolvedProvider(settings).provider
    }

    /// Stores a new login from `settings` (any kind), verifying an `oidc` sign-in first.
    @discardableResult
    public func save(_ response: TokenResponse, settings: ProviderSettings, for key: ItemKey,
                     maximumLifetime: TimeInterval? = nil) async throws -> SessionStatus {
        let provider = try await provider(for: settings)
        return try await save(response, provider: provider, for: key, maximumLifetime: maximumLifetime)
    }
}
