import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A sign-in with an e-mail address and password at Firebase Auth or Supabase Auth, run by the
/// vault so that the password goes from the caller's secure memory to the provider and nowhere
/// else, and the answer is stored by the one save path.
///
/// ```swift
/// let result = try await sessions.signInWithPassword(PasswordSignIn(service: "com.sorted.api", account: nil,
///     settings: settings, email: "ada@example.com", password: password))
/// ```
public struct PasswordSignIn: Sendable {
    public var service: String
    /// Where the login is stored; nil: the e-mail address.
    public var account: String?
    public var settings: ProviderSettings
    public var email: String
    public var password: SecureBytes
    /// Creates the account first (Firebase accounts:signUp, Supabase signup).
    public var create: Bool

    public init(service: String, account: String?, settings: ProviderSettings, email: String, password: SecureBytes, create: Bool = false) {
        self.service = service
        self.account = account
        self.settings = settings
        self.email = email
        self.password = password
        self.create = create
    }
}

extension SignInFlows {
    /// Signs in (or, with `create`, signs up); the manager stores the answer under `key`.
    func password(_ request: PasswordSignIn) async throws -> (response: TokenResponse, provider: OAuthProvider, key: ItemKey) {
        guard request.settings.kind == .firebase || request.settings.kind == .supabase else {
            throw VaultError.invalidArgument("a password sign-in is for a firebase or supabase provider; an \(request.settings.kind) provider signs in with the browser, paste or device flow")
        }
        guard !request.email.isEmpty, request.email.utf8.count <= 320, request.email.contains("@"),
              request.email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw VaultError.invalidArgument("the e-mail address must be 1 to 320 characters with an @ and no spaces or control characters")
        }
        guard request.password.count >= 1 && request.password.count <= 4096 else {
            throw VaultError.invalidArgument("the password must be 1 to 4096 bytes")
        }
        let key = try ItemKey(service: request.service, account: request.account ?? request.email)
        let provider = try request.settings.resolved()
        let response: TokenResponse
        switch await oauth.passwordSignIn(email: request.email, password: request.password, create: request.create, provider: provider) {
        case .tokens(let tokens): response = tokens
        case .rejected(OAuthClient.multiFactorRequired, _):
            throw VaultError.invalidArgument("this account signs in with a second factor: multi-factor sign-in is not supported yet; nothing was stored")
        case .invalidGrant:
            throw VaultError(.providerRejected, "the provider refused the sign-in (the user is disabled or unknown); nothing was stored")
        case .rejected(let error, let description):
            throw VaultError(.providerRejected, "the provider refused the sign-in with \(error)\(description.map { ": \($0)" } ?? ""); nothing was stored")
        case .transient(let reason):
            throw VaultError(.unavailable, "the provider could not be reached to sign in (\(reason)); nothing was stored, try again later")
        case .lost(let reason):
            throw VaultError(.unavailable, "the provider's answer to the sign-in was lost (\(reason)); nothing was stored, sign in again")
        }
        return (response, provider, key)
    }
}

extension OAuthClient {
    /// The error a Firebase answer that asks for a second factor (`mfaPendingCredential`) reads as.
    static let multiFactorRequired = "multi_factor_required"

    /// Firebase: `{identitytoolkit}/v1/accounts:signInWithPassword` (or `:signUp`) with the API key
    /// as `key`; Supabase: `{url}/auth/v1/token?grant_type=password` (or `/auth/v1/signup`) with the
    /// anon key as `apikey`. The body is JSON `{"email", "password"}`, built in secure memory.
    func passwordSignIn(email: String, password: SecureBytes, create: Bool, provider: OAuthProvider) async -> RefreshAnswer {
        guard let apiKey = provider.apiKey, let base = provider.baseURL else {
            return .rejected(error: "configuration", description: "the provider has no API key or URL")
        }
        var body = JSONBody()
        body.add("email", secret: SecureBytes(copying: Array(email.utf8)))
        body.add("password", secret: password)
        let text = ProviderErrorText(sent: [password, apiKey])
        if provider.kind == .firebase {
            guard let identity = Self.identityToolkit(securetoken: base) else {
                return .rejected(error: "configuration", description: "the Firebase URL is neither securetoken.googleapis.com nor an Auth emulator's …/securetoken.googleapis.com")
            }
            let url = identity.appending(path: create ? "v1/accounts:signUp" : "v1/accounts:signInWithPassword")
            let request = OAuthHTTPRequest(url: url, body: body.finish(), bodyFormat: .json,
                                           secretQuery: [SecretParameter(name: "key", value: apiKey)])
            return await post(request) { response in
                if response.status == 200, ProviderErrorText.object(response.body)?["mfaPendingCredential"] != nil {
                    return .rejected(error: Self.multiFactorRequired, description: nil)
                }
                return Self.firebaseRefreshAnswer(response, text: text)
            }
        }
        let url = create ? base.appending(path: "auth/v1/signup") : Self.withQuery(base.appending(path: "auth/v1/token"), "grant_type=password")
        guard let url else { return .rejected(error: "configuration", description: "the Supabase URL cannot take a query") }
        let request = OAuthHTTPRequest(url: url, body: body.finish(), bodyFormat: .json,
                                       secretHeaders: [SecretParameter(name: "apikey", value: apiKey)])
        return await post(request) { Self.supabaseRefreshAnswer($0, text: text) }
    }

    /// identitytoolkit's base beside a securetoken base: Google's host, or the Auth emulator's
    /// scheme of the real host as the first path segment.
    static func identityToolkit(securetoken base: URL) -> URL? {
        if base.host == "securetoken.googleapis.com" { return URL(string: "https://identitytoolkit.googleapis.com") }
        let text = base.absoluteString
        guard text.hasSuffix("/securetoken.googleapis.com") else { return nil }
        return URL(string: String(text.dropLast("securetoken.googleapis.com".count)) + "identitytoolkit.googleapis.com")
    }
}
