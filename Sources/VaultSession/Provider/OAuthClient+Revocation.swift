import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

extension OAuthClient {
    /// Ends a logged-out login at its provider, as its kind allows:
    /// - `oauth2`, `oidc`: RFC 7009 at the revocation endpoint, the refresh token first (revoking it
    ///   ends the whole grant at most providers, §2.1), then the access token;
    /// - `supabase`: GoTrue's logout of this one session (see ``logoutSupabase(accessToken:provider:)``);
    /// - `firebase`: nothing can be sent (a client cannot revoke a Firebase refresh token).
    func revokeLogin(_ revocation: QueuedRevocation) async -> RevocationAnswer {
        switch revocation.provider.kind {
        case .firebase:
            return .rejected("unsupported")
        case .supabase:
            return await logoutSupabase(accessToken: revocation.accessToken, provider: revocation.provider)
        case .oauth2, .oidc:
            guard let endpoint = revocation.provider.revocationEndpoint else { return .rejected("no revocation endpoint") }
            var tokens: [(SecureBytes, String)] = []
            if let refreshToken = revocation.refreshToken { tokens.append((refreshToken, "refresh_token")) }
            tokens.append((revocation.accessToken, "access_token"))
            for (token, hint) in tokens {
                let answer = await revoke(token, hint: hint, provider: revocation.provider, at: endpoint)
                guard case .revoked = answer else { return answer }
            }
            return .revoked
        }
    }
}
