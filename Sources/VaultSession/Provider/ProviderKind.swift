/// Which protocol a login speaks with its provider: how a refresh is asked for, how the answers
/// map to outcomes, and what logout can do. Chosen at sign-in and stored sealed with the login.
///
/// A record written before kinds existed has none and reads as ``oauth2``.
public enum ProviderKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// RFC 6749 refresh (form body, `invalid_grant`) and RFC 7009 revocation.
    case oauth2
    /// OpenID Connect: RFC 6749 at the endpoints the issuer's discovery document names, and the id
    /// token verified (signature, `iss`, `aud`, `exp`) at sign-in and after every refresh.
    case oidc
    /// Firebase Auth: securetoken refresh with the Web API key in the query; the app's token is the
    /// ID token; errors are Google error objects; clients cannot revoke.
    case firebase
    /// Supabase Auth (GoTrue): JSON refresh body and `apikey` header; logout ends the server session.
    case supabase

    public var description: String { rawValue }

    /// Whether the provider lets a client end the login at the provider at logout.
    public var canRevoke: Bool {
        switch self {
        case .oauth2, .oidc, .supabase: return true
        case .firebase: return false
        }
    }
}
