import VaultCrypto

/// The readers of a token endpoint's answer, for the libFuzzer target under `Fuzz/` (a separate
/// package, so it sees only what is public). Not API: `@_spi(Fuzzing)` keeps it out of every
/// normal import.
@_spi(Fuzzing) public enum ProviderAnswerFuzzing {
    /// Reads a refresh answer as a provider of `kind` is read, after a request that carried `sent`.
    /// Returns the tokens, if the answer held them, and every text the outcome would show a user or
    /// write to a log.
    public static func refreshAnswer(status: Int, body: SecureBytes, kind: ProviderKind, sent: [SecureBytes])
        -> (tokens: TokenResponse?, texts: [String]) {
        let response = OAuthHTTPResponse(status: status, body: body)
        let text = ProviderErrorText(sent: sent)
        let answer: RefreshAnswer = switch kind {
        case .oauth2, .oidc: OAuthClient.refreshAnswer(response, text: text)
        case .firebase: OAuthClient.firebaseRefreshAnswer(response, text: text)
        case .supabase: OAuthClient.supabaseRefreshAnswer(response, text: text)
        }
        switch answer {
        case .tokens(let tokens): return (tokens, [])
        case .invalidGrant: return (nil, [])
        case .transient(let reason), .lost(let reason): return (nil, [reason])
        case .rejected(let error, let description): return (nil, [error] + (description.map { [$0] } ?? []))
        }
    }

    /// Reads an RFC 7009 revocation answer after a request that carried `sent`; the texts as above.
    public static func revocationAnswer(status: Int, body: SecureBytes, sent: [SecureBytes]) -> [String] {
        switch OAuthClient.revocationAnswer(OAuthHTTPResponse(status: status, body: body), text: ProviderErrorText(sent: sent)) {
        case .revoked: []
        case .transient(let reason), .rejected(let reason): [reason]
        }
    }
}
