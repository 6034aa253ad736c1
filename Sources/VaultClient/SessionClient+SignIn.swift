import Foundation
import Varlink
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession

/// Sign-ins the daemon runs: it keeps the state, the PKCE verifier and the nonce; the client opens
/// the URL and hands back the redirect's query.
///
/// ```swift
/// let start = try await sessions.beginLogin(service: "com.sorted.api", account: nil, provider: settings,
///                                           flow: .browser, redirectURI: listener, scopes: ["read"])
/// // open start.authorizationURL; when the browser comes back to the listener:
/// let (account, session) = try await sessions.completeLogin(start.flowID, callbackQuery: query)
/// ```
///
/// A callback that is not this sign-in's throws `VaultError` code `.callbackMismatch`: nothing
/// changed, keep waiting for the right one.
extension SessionClient {
    public struct LoginStart: Sendable {
        public let flowID: String
        /// The page to open: a device sign-in's verification page (with the code when offered).
        public let authorizationURL: String
        public let expiresAt: Date
        /// What the user enters where, for a device sign-in; nil otherwise.
        public let device: DeviceCode?
    }

    public func beginLogin(service: String, account: String?, provider: ProviderSettings, flow: SignInFlow, redirectURI: String,
                           scopes: [String], timeoutSeconds: Int? = nil) async throws -> LoginStart {
        let request = SessionInterface.BeginLogin.Request(
            service: service, account: account, provider: .init(provider), flow: flow.rawValue, redirectUri: redirectURI,
            scopes: scopes, timeoutSeconds: timeoutSeconds.map { Int64($0) })
        let reply = try await sessionCall(SessionInterface.BeginLogin.self, request)
        let expiresAt = Date(timeIntervalSince1970: reply.expiresAt)
        if let url = reply.authorizationUrl {
            return LoginStart(flowID: reply.flowId, authorizationURL: url, expiresAt: expiresAt, device: nil)
        }
        guard let userCode = reply.userCode, let page = reply.verificationUri.flatMap(URL.init(string:)),
              let interval = reply.intervalSeconds else { throw SessionWireError.malformed("BeginLogin") }
        let complete = reply.verificationUriComplete.flatMap(URL.init(string:))
        let device = DeviceCode(userCode: userCode, verificationURI: page, verificationURIComplete: complete, interval: TimeInterval(interval))
        return LoginStart(flowID: reply.flowId, authorizationURL: (complete ?? page).absoluteString, expiresAt: expiresAt, device: device)
    }

    /// Completes the sign-in with the redirect's query (after `?`); the account the login was stored
    /// under and its state (as ``status(_:)`` reports it).
    public func completeLogin(_ flowID: String, callbackQuery: SecureBytes) async throws -> (account: String, session: [String: JSONValue]) {
        let reply = try await sessionCall(SessionInterface.CompleteLogin.self, .init(flowId: flowID, callbackQuery: callbackQuery))
        return (reply.account, VarlinkWire.jsonObject(reply.session))
    }

    /// Ends the sign-in; false when there was none.
    @discardableResult
    public func cancelLogin(_ flowID: String) async throws -> Bool {
        try await sessionCall(SessionInterface.CancelLogin.self, .init(flowId: flowID)).cancelled
    }
}

extension SessionClient {
    /// Signs in with an e-mail address and password (Firebase, Supabase; `create`: signs up); the
    /// account the login was stored under (the e-mail unless given).
    public func passwordLogin(service: String, account: String?, provider: ProviderSettings, email: String,
                              password: SecureBytes, create: Bool) async throws -> String {
        let request = SessionInterface.PasswordLogin.Request(service: service, account: account, provider: .init(provider),
                                                             email: email, password: password, create: create ? true : nil)
        return try await sessionCall(SessionInterface.PasswordLogin.self, request).account
    }
}
