import Foundation
import TestSupport
import Varlink
import VaultCrypto
import VaultSession

/// What the kind matrix needs beyond the shared ``ProviderServer``: the settings an app saves with
/// its login, and where each kind's sign-in answer keeps its tokens.
extension ProviderServer {
    /// Starts the server of `kind`; Firebase rotates refresh tokens so the matrix can check rotation.
    static func matrix(_ kind: ProviderKind) throws -> ProviderServer {
        switch kind {
        case .oauth2, .oidc: return try OAuthTestProvider()
        case .supabase: return try ProviderServer(.supabase)
        case .firebase: return try ProviderServer(.firebase, arguments: ["--rotate-refresh-tokens"])
        }
    }

    /// The provider settings the app saves (`session save --kind …`); django-oauth-toolkit serves both
    /// `oauth2` and `oidc`.
    func settings(as loginKind: ProviderKind) throws -> ProviderSettings {
        if loginKind == .oidc, let provider = self as? OAuthTestProvider {
            return ProviderSettings(kind: .oidc, clientID: OAuthTestProvider.clientID,
                                    clientSecret: SecureBytes(copying: Array(OAuthTestProvider.clientSecret.utf8)),
                                    issuer: provider.issuer)
        }
        let key = apiKey.map { SecureBytes(copying: Array($0.utf8)) }
        switch kind {
        case .oauth2:
            guard let provider = self as? OAuthTestProvider else { throw HarnessError("not the oauth2 test provider") }
            return ProviderSettings(try provider.provider())
        case .supabase:
            return ProviderSettings(kind: .supabase, url: baseURL, apiKey: key)
        case .firebase:
            return ProviderSettings(kind: .firebase, url: URL(string: base + "/securetoken.googleapis.com")!, apiKey: key)
        }
    }

    /// Signs ada in as an app of `loginKind` would (oidc: with scope openid): the answer's JSON object.
    func signIn(as loginKind: ProviderKind) async throws -> [String: JSONValue] {
        let bytes = loginKind == .oidc ? try await (self as! OAuthTestProvider).signInWithOpenID() : try await signIn()
        guard case .object(let answer) = try JSONValue.parse(bytes) else { throw HarnessError("bad sign-in answer") }
        return answer
    }

    /// The token the app sends to its API (Firebase: the ID token).
    func appToken(_ answer: [String: JSONValue]) -> String? {
        answer[kind == .firebase ? "idToken" : "access_token"]?.stringValue
    }

    func refreshToken(_ answer: [String: JSONValue]) -> String? {
        answer[kind == .firebase ? "refreshToken" : "refresh_token"]?.stringValue
    }

    /// Whether the provider still refreshes with `refreshToken` (asked directly, as the app would).
    func refreshTokenWorks(_ refreshToken: String) async throws -> Bool {
        try await refreshDirectly(refreshToken).0 == 200
    }

    /// Makes ada's login unusable as an administrator would: disable her (supabase bans, firebase
    /// disables). provider.py has no users to disable, so oauth2 revokes every token instead.
    func disableAda() async throws {
        if kind == .oauth2 { try await revokeAll() } else { try await disableUser() }
    }
}
