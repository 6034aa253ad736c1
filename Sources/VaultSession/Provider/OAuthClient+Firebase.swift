import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Firebase Auth's securetoken refresh (`POST {base}/v1/token?key=API_KEY`, form body
/// `grant_type=refresh_token&refresh_token=…`) and how its answers map to outcomes:
///
/// | Firebase answers                                                      | outcome           |
/// |-----------------------------------------------------------------------|-------------------|
/// | 200 with `id_token`                                                   | refreshed         |
/// | 200 without a readable `id_token`                                     | ProviderRejected  |
/// | `TOKEN_EXPIRED`, `INVALID_REFRESH_TOKEN`, `USER_DISABLED`, `USER_NOT_FOUND` | reauthRequired (wiped) |
/// | `TOO_MANY_ATTEMPTS_TRY_LATER`, HTTP 408, 429, 5xx, no answer          | offline           |
/// | anything else (`INVALID_GRANT_TYPE`, `MISSING_REFRESH_TOKEN`, a bad API key, `PROJECT_NUMBER_MISMATCH`, 3xx, 401, 403, a body that is not an error object) | ProviderRejected with Firebase's message |
extension OAuthClient {
    /// Messages (the part before any " : " detail) that mean the refresh token will never work again.
    static let firebaseDeadLogin: Set<String> = ["TOKEN_EXPIRED", "INVALID_REFRESH_TOKEN", "USER_DISABLED", "USER_NOT_FOUND"]
    /// Messages that mean "try again later".
    static let firebaseTransient: Set<String> = ["TOO_MANY_ATTEMPTS_TRY_LATER"]

    func refreshFirebase(_ session: LoginSession, refreshToken: SecureBytes) async -> RefreshAnswer {
        guard let apiKey = session.provider.apiKey else {
            return .rejected(error: "configuration", description: "the login has no Firebase API key; sign in again")
        }
        var form = FormBody()
        form.add("grant_type", "refresh_token")
        form.add("refresh_token", secret: refreshToken)
        let request = OAuthHTTPRequest(url: session.provider.tokenEndpoint, body: form.finish(),
                                       secretQuery: [SecretParameter(name: "key", value: apiKey)])
        return await post(request) { Self.firebaseRefreshAnswer($0, text: ProviderErrorText(sent: [refreshToken, apiKey])) }
    }

    static func firebaseRefreshAnswer(_ response: OAuthHTTPResponse, text: ProviderErrorText) -> RefreshAnswer {
        if response.status == 200 {
            let parsed = response.body.withUnsafeBytes { raw in Result { try TokenResponse(json: raw, kind: .firebase) } }
            switch parsed {
            case .success(let tokens): return .tokens(tokens)
            case .failure(let error):
                return .rejected(error: "invalid_response", description: (error as? VaultError)?.reason ?? "unreadable token response")
            }
        }
        let message = ProviderErrorText.object(response.body)?["error"]?.objectValue?["message"]?.stringValue
        let code = message.map { String($0.split(separator: " : ", maxSplits: 1).first ?? Substring($0)) }
        if let code, firebaseDeadLogin.contains(code) { return .invalidGrant }
        if let code, firebaseTransient.contains(code) { return .transient("Firebase answered \(code)") }
        switch response.status {
        case 408, 429, 500...599:
            return .transient("the provider answered HTTP \(response.status)")
        default:
            return .rejected(error: text.clean(code, max: 128) ?? "http_\(response.status)", description: text.clean(message))
        }
    }
}
