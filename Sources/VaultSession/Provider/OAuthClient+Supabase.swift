import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Supabase Auth (GoTrue): refresh is `POST {url}/auth/v1/token?grant_type=refresh_token` with the
/// JSON body `{"refresh_token": …}` and the anon key as `apikey`; logout is
/// `POST {url}/auth/v1/logout?scope=local` with the access token as bearer. How answers map:
///
/// | GoTrue answers (refresh)                                              | outcome           |
/// |-----------------------------------------------------------------------|-------------------|
/// | 200 with `access_token`                                               | refreshed         |
/// | 200 that is not a token response                                      | ProviderRejected  |
/// | `error_code` `refresh_token_not_found`, `refresh_token_already_used`, `session_not_found`, `session_expired`, `user_not_found`, `user_banned`; or the older `"error": "invalid_grant"` | reauthRequired (wiped) |
/// | `over_request_rate_limit`, HTTP 408, 429, 5xx, no answer              | offline           |
/// | anything else (a missing or wrong `apikey`, `bad_json`, `validation_failed`, 3xx, …) | ProviderRejected with GoTrue's message |
///
/// | GoTrue answers (logout)                          | Logout reply                         |
/// |--------------------------------------------------|--------------------------------------|
/// | 2xx                                              | revoked                              |
/// | 401, 403, 404 (the session is already gone)      | revoked                              |
/// | 408, 429, 5xx, no answer                         | revocationQueued (retried)           |
/// | anything else                                    | neither (logged; the login is wiped here) |
extension OAuthClient {
    static let supabaseDeadLogin: Set<String> = [
        "refresh_token_not_found", "refresh_token_already_used", "session_not_found", "session_expired",
        "user_not_found", "user_banned",
    ]
    static let supabaseTransient: Set<String> = ["over_request_rate_limit"]

    func refreshSupabase(_ session: LoginSession, refreshToken: SecureBytes) async -> RefreshAnswer {
        guard let apiKey = session.provider.apiKey, let url = Self.withQuery(session.provider.tokenEndpoint, "grant_type=refresh_token") else {
            return .rejected(error: "configuration", description: "the login has no Supabase anon key; sign in again")
        }
        var body = JSONBody()
        body.add("refresh_token", secret: refreshToken)
        let request = OAuthHTTPRequest(url: url, body: body.finish(), bodyFormat: .json,
                                       secretHeaders: [SecretParameter(name: "apikey", value: apiKey)])
        return await post(request) { Self.supabaseRefreshAnswer($0, text: ProviderErrorText(sent: [refreshToken, apiKey])) }
    }

    static func supabaseRefreshAnswer(_ response: OAuthHTTPResponse, text: ProviderErrorText) -> RefreshAnswer {
        if response.status == 200 {
            let parsed = response.body.withUnsafeBytes { raw in Result { try TokenResponse(json: raw) } }
            switch parsed {
            case .success(let tokens): return .tokens(tokens)
            case .failure(let error):
                return .rejected(error: "invalid_response", description: (error as? VaultError)?.reason ?? "unreadable token response")
            }
        }
        let object = ProviderErrorText.object(response.body) ?? [:]
        let errorCode = object["error_code"]?.stringValue
        let oldError = object["error"]?.stringValue
        if let errorCode, supabaseDeadLogin.contains(errorCode) { return .invalidGrant }
        if errorCode == nil, oldError == "invalid_grant" { return .invalidGrant }
        if let errorCode, supabaseTransient.contains(errorCode) { return .transient("Supabase answered \(errorCode)") }
        switch response.status {
        case 408, 429, 500...599:
            return .transient("the provider answered HTTP \(response.status)")
        default:
            let message = object["msg"]?.stringValue ?? object["message"]?.stringValue ?? object["error_description"]?.stringValue
            return .rejected(error: text.clean(errorCode ?? oldError, max: 128) ?? "http_\(response.status)", description: text.clean(message))
        }
    }

    /// GoTrue's logout for one login: ends that session at the server (`scope=local`).
    func logoutSupabase(accessToken: SecureBytes, provider: OAuthProvider) async -> RevocationAnswer {
        guard let apiKey = provider.apiKey, let endpoint = provider.revocationEndpoint,
              let url = Self.withQuery(endpoint, "scope=local") else { return .rejected("configuration") }
        let request = OAuthHTTPRequest(url: url, body: SecureBytes(copying: Array("{}".utf8)), authorization: .bearer(accessToken),
                                       bodyFormat: .json,
                                       secretHeaders: [SecretParameter(name: "apikey", value: apiKey)])
        return await post(request, read: Self.supabaseLogoutAnswer)
    }

    /// How GoTrue's logout answer maps to a reply (the second table above).
    static func supabaseLogoutAnswer(_ response: OAuthHTTPResponse) -> RevocationAnswer {
        switch response.status {
        case 200...299, 401, 403, 404: return .revoked
        case 408, 429, 500...599: return .transient("the provider answered HTTP \(response.status)")
        default: return .rejected("http_\(response.status)")
        }
    }

    static func withQuery(_ url: URL, _ query: String) -> URL? {
        URL(string: url.absoluteString + (url.query == nil ? "?" : "&") + query)
    }
}
