import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

extension OAuthClient {
    /// Exchanges an authorization code for tokens (RFC 6749 §4.1.3 with RFC 7636's
    /// `code_verifier`) at the provider's token endpoint, authenticated as every token request is.
    /// The answer reads as a refresh answer does: `invalidGrant` here means the code was used
    /// already, expired, or does not fit the verifier.
    func exchange(code: SecureBytes, verifier: SecureBytes, redirectURI: URL, provider: OAuthProvider) async -> RefreshAnswer {
        var form = FormBody()
        form.add("grant_type", "authorization_code")
        form.add("code", secret: code)
        form.add("redirect_uri", redirectURI.absoluteString)
        form.add("code_verifier", secret: verifier)
        let text = ProviderErrorText(sent: [code, verifier] + [provider.clientSecret].compactMap { $0 })
        return await post(authenticated(form, to: provider.tokenEndpoint, provider: provider)) {
            Self.refreshAnswer($0, text: text)
        }
    }

    /// GoTrue's code exchange (`POST {url}/auth/v1/token?grant_type=pkce`, JSON `auth_code` and
    /// `code_verifier`, the anon key as `apikey`); its answers read as a Supabase refresh's do.
    func exchangeGoTrue(code: SecureBytes, verifier: SecureBytes, provider: OAuthProvider) async -> RefreshAnswer {
        guard let apiKey = provider.apiKey, let base = provider.baseURL,
              let url = Self.withQuery(base.appending(path: "auth/v1/token"), "grant_type=pkce") else {
            return .rejected(error: "configuration", description: "the provider has no anon key or URL")
        }
        var body = JSONBody()
        body.add("auth_code", secret: code)
        body.add("code_verifier", secret: verifier)
        let request = OAuthHTTPRequest(url: url, body: body.finish(), bodyFormat: .json,
                                       secretHeaders: [SecretParameter(name: "apikey", value: apiKey)])
        return await post(request) { Self.supabaseRefreshAnswer($0, text: ProviderErrorText(sent: [code, verifier, apiKey])) }
    }
}
