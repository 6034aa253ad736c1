import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultLoopback

extension VaultLogin {
    /// Signs the user in through the vault and stores the login under this service and account: the
    /// vault (the daemon, or the in-process `SessionManager`) makes the state, the PKCE verifier and
    /// the nonce and exchanges the code; the app only carries the browser's answer back.
    ///
    /// ```swift
    /// let provider = ProviderSettings(kind: .oidc, clientID: "sorted-desktop", issuer: URL(string: "https://id.sorted.example")!)
    /// try await login.signIn(provider: provider, scopes: ["read"])   // opens the browser, waits for its answer
    /// ```
    ///
    /// The loopback opener runs the sign-in ``BrowserSignIn`` runs for `sortedvault session login`.
    /// Cancelling the calling `Task` cancels the vault's sign-in (and closes the loopback receiver);
    /// so does `timeout` (seconds, 1 to 3600, on ``sleeper``). Throws `VaultError`: `.providerRejected`
    /// (declined, or a refused code), `.callbackMismatch` (a custom opener's answer with another
    /// sign-in's state), `.unavailable` (no answer within `timeout`, or the provider unreachable);
    /// `CancellationError`. A custom opener must end when its task is cancelled (as `Task.sleep`
    /// and AsyncHTTPClient do): the timeout waits for it.
    @discardableResult
    public func signIn(provider: ProviderSettings, scopes: [String] = [], timeout: TimeInterval = SignInRequest.defaultLifetime,
                       opener: SignInOpener = .loopback()) async throws -> SessionStatus {
        func request(_ redirect: URL, _ flow: SignInFlow) -> SignInRequest {
            SignInRequest(service: key.service, account: key.account, settings: provider, flow: flow, redirectURI: redirect,
                          scopes: scopes, lifetime: timeout)
        }
        let sessions = self.sessions
        switch opener.kind {
        case .custom(let redirect, let open):
            let start = try await sessions.beginSignIn(request(redirect, .app))
            return try await cancellingOnError(start) {
                try await within(timeout, waitingFor: "the opener") {
                    let callback = try await open(start.authorizationURL, redirect)
                    try Task.checkCancellation()
                    return try await sessions.completeSignIn(start.flowID, callbackQuery: try Self.query(of: callback, at: redirect)).status
                }
            }
        case .loopback(let port, let localhost, let show):
            let listener = try LoopbackListener(port: port, path: nil, localhost: localhost)
            defer { listener.close() }
            guard let redirect = URL(string: listener.redirectURI) else { throw VaultError(.daemonFailed, "the receiver's address is not a URL") }
            switch try await BrowserSignIn.run(request(redirect, .browser), through: sessions, listener: listener,
                                               timeout: Self.duration(timeout), clock: sleeper, shownIn: "the app",
                                               show: { show($0.authorizationURL) }) {
            case .signedIn(let result): return result.status
            case .timedOut: throw Self.noAnswer(from: "the browser", within: timeout)
            }
        }
    }

    /// `body`'s answer, unless `timeout` passes on ``sleeper`` first: then `body` is cancelled and
    /// `.unavailable` thrown.
    private func within(_ timeout: TimeInterval, waitingFor what: String,
                        _ body: @escaping @Sendable () async throws -> SessionStatus) async throws -> SessionStatus {
        try await DeadlineRace.run(limit: Self.duration(timeout), clock: sleeper, body) { .failure(Self.noAnswer(from: what, within: timeout)) }
    }

    private static func duration(_ timeout: TimeInterval) -> Duration { .milliseconds(Int64((timeout * 1000).rounded(.up))) }

    private static func noAnswer(from what: String, within timeout: TimeInterval) -> VaultError {
        VaultError(.unavailable, "no answer came from \(what) within \(Int(timeout)) s; the sign-in was cancelled, nothing was stored: sign in again")
    }

    /// Runs `body`; when it throws (cancelled, timed out, refused), the vault's sign-in is ended too
    /// (a no-op when it ended already), so nothing waits for a callback that will not come.
    private func cancellingOnError(_ start: SignInStart, _ body: () async throws -> SessionStatus) async throws -> SessionStatus {
        do {
            return try await body()
        } catch {
            await sessions.endSignIn(start)
            throw error
        }
    }

    /// The query of the URL the provider redirected to, when it is at `redirect` (scheme, host, port, path).
    static func query(of callback: URL, at redirect: URL) throws -> SecureBytes {
        guard let got = URLComponents(url: callback, resolvingAgainstBaseURL: false),
              let want = URLComponents(url: redirect, resolvingAgainstBaseURL: false),
              got.scheme?.lowercased() == want.scheme?.lowercased(), got.host?.lowercased() == want.host?.lowercased(),
              got.port == want.port, got.percentEncodedPath == want.percentEncodedPath else {
            throw VaultError.invalidArgument("the opener returned a URL that is not at the redirect URI; return the URL the provider redirected to")
        }
        return SecureBytes(copying: Array((got.percentEncodedQuery ?? "").utf8))
    }
}
