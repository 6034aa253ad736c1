import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Varlink
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession

/// Sign-ins the daemon runs: it keeps the state, the PKCE verifier and the nonce; the client opens
/// the URL and hands back the redirect's query.
///
/// ```swift
/// let start = try await sessions.beginSignIn(SignInRequest(service: "com.sorted.api", account: nil, settings: settings,
///                                                          flow: .browser, redirectURI: listener, scopes: ["read"]))
/// // open start.authorizationURL; when the browser comes back to the listener:
/// let result = try await sessions.completeSignIn(start.flowID, callbackQuery: query)
/// ```
///
/// A callback that is not this sign-in's throws `VaultError` code `.callbackMismatch`: nothing
/// changed, keep waiting for the right one.
extension SessionClient {
    public func beginSignIn(_ request: SignInRequest) async throws -> SignInStart {
        let wire = SessionInterface.BeginLogin.Request(
            service: request.service, account: request.account, provider: .init(request.settings), flow: request.flow.rawValue,
            redirectUri: request.redirectURI.absoluteString, scopes: request.scopes, timeoutSeconds: Int64(request.lifetime.rounded(.up)))
        let reply = try await beginLogin(wire)
        let expiresAt = Date(timeIntervalSince1970: reply.expiresAt)
        if let text = reply.authorizationUrl {
            guard let url = URL(string: text) else { throw SessionWireError.malformed("BeginLogin") }
            return SignInStart(flowID: reply.flowId, authorizationURL: url, expiresAt: expiresAt)
        }
        guard let userCode = reply.userCode, let page = reply.verificationUri.flatMap(URL.init(string:)),
              let interval = reply.intervalSeconds else { throw SessionWireError.malformed("BeginLogin") }
        let complete = reply.verificationUriComplete.flatMap(URL.init(string:))
        let device = DeviceCode(userCode: userCode, verificationURI: page, verificationURIComplete: complete, interval: TimeInterval(interval))
        return SignInStart(flowID: reply.flowId, authorizationURL: complete ?? page, expiresAt: expiresAt, device: device)
    }

    public func completeSignIn(_ flowID: String, callbackQuery: SecureBytes) async throws -> SignInResult {
        let reply = try await completeLogin(SessionInterface.CompleteLogin.Request(flowId: flowID, callbackQuery: callbackQuery))
        return SignInResult(key: try ItemKey(service: reply.service, account: reply.account), status: SessionStatus(wire: reply.session))
    }

    @discardableResult
    public func cancelSignIn(_ flowID: String) async throws -> Bool {
        try await cancelLogin(SessionInterface.CancelLogin.Request(flowId: flowID)).cancelled
    }

    /// Ends every sign-in of this user under way (of `service`, when given) that the policy lets
    /// this program sign in to, whichever program began it; how many.
    @discardableResult
    public func cancelSignIns(service: String? = nil) async throws -> Int {
        Int(try await cancelLogins(SessionInterface.CancelLogins.Request(service: service)).cancelled)
    }
}

extension SessionClient {
    /// Signs in with an e-mail address and password (Firebase, Supabase; `create`: signs up); the
    /// account the login was stored under (the e-mail unless given).
    public func passwordLogin(service: String, account: String?, provider: ProviderSettings, email: String,
                              password: SecureBytes, create: Bool) async throws -> String {
        let request = SessionInterface.PasswordLogin.Request(service: service, account: account, provider: .init(provider),
                                                             email: email, password: password, create: create ? true : nil)
        return try await passwordLogin(request).account
    }
}
