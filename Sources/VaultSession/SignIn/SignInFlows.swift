import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// The sign-ins a ``SessionManager`` runs: authorization code with PKCE (RFC 6749
/// §4.1 and RFC 7636; here), device (RFC 8628; `SignInFlows+Device.swift`) and password
/// (`SignInFlows+Password.swift`). The caller opens the URL ``begin(_:owner:program:)`` answers and
/// hands back the redirect's query to ``complete(_:callbackQuery:owner:)``; what a sign-in ends
/// with, the provider's verified answer and its flow, the manager stores through its one save path.
///
/// Why these types hold everything: the state, the S256 verifier and the nonce come from the
/// CSPRNG and never leave this process, so the code the browser carries is useless to whoever sees
/// it (the caller, the browser's history, a process listening on the port); the callback must bring
/// back the exact state (constant-time compare), and an `oidc` id token the exact nonce. A sign-in
/// completes at most once, only for the user who began it, and only before it expires.
///
/// Its one state is the table of sign-ins under way, behind a lock held for no await.
final class SignInFlows: Sendable {
    /// What a sign-in ends with: the provider's verified answer and the flow it was made for.
    typealias Verified = (response: TokenResponse, flow: PendingSignIn)

    let oauth: OAuthClient
    let clock: any VaultClock
    /// What a device sign-in's polls sleep on.
    let sleeper: any Clock<Duration>
    /// Whether device sign-ins may begin (``SessionManager/Configuration/deviceFlow``).
    let deviceFlow: Bool
    let openID: OpenIDLogins
    /// The sign-ins under way; each hold is one look or change, never across an await.
    let pending = Locked(PendingSignIns())

    init(oauth: OAuthClient, clock: any VaultClock, sleeper: any Clock<Duration>, deviceFlow: Bool, openID: OpenIDLogins) {
        self.oauth = oauth
        self.clock = clock
        self.sleeper = sleeper
        self.deviceFlow = deviceFlow
        self.openID = openID
    }

    /// Begins a sign-in for `owner` (the caller's uid) from `program` (the caller's executable, as
    /// the policy sees it; nil when unknown or in-process): each program of a user has its own cap.
    func begin(_ request: SignInRequest, owner: UInt32, program: String?) async throws -> SignInStart {
        let gotrue = request.settings.kind == .supabase && request.settings.externalProvider != nil
        guard request.settings.kind == .oauth2 || request.settings.kind == .oidc || gotrue else {
            throw VaultError.invalidArgument(request.settings.kind == .supabase
                ? "a supabase sign-in here is by password (--flow password) or through an external provider's page (--provider github)"
                : "a \(request.settings.kind) sign-in here is by password (--flow password); for another sign-in use the provider's SDK and pipe its answer to `session save`")
        }
        guard request.lifetime >= 1 && request.lifetime <= SignInRequest.maximumLifetime else {
            throw VaultError.invalidArgument("the sign-in's timeout must be 1 to \(Int(SignInRequest.maximumLifetime)) seconds")
        }
        if request.account == nil && request.settings.kind != .oidc && !gotrue {
            throw VaultError.invalidArgument("an \(request.settings.kind) sign-in needs the account to store it under (only oidc and supabase can name it from the verified user)")
        }
        _ = try ItemKey(service: request.service, account: request.account ?? "placeholder")  // a clear error on a bad name now
        let scopes = try Self.checkedScopes(request.scopes, openID: request.settings.kind == .oidc)
        if request.flow == .device { return try await beginDevice(request, scopes: scopes, owner: owner, program: program) }
        try RedirectURIRule.check(request.redirectURI, flow: request.flow)
        let (provider, endpoint, _) = try await openID.resolvedProvider(request.settings)
        let authorization = gotrue ? provider.baseURL?.appending(path: "auth/v1/authorize") : endpoint
        guard let authorization else {
            throw VaultError.invalidArgument(request.settings.kind == .oidc
                ? "the issuer's discovery document names no authorization_endpoint: this provider offers no browser sign-in"
                : "an oauth2 sign-in needs the provider's authorization endpoint")
        }
        try SecureEndpoint.check(authorization, what: "authorization endpoint")

        let state = SecureBytes(randomCount: 32).base64URLEncoded()
        let verifier = SecureBytes(randomCount: 32).base64URLEncoded()
        let nonce = provider.kind == .oidc ? SecureBytes(randomCount: 32).base64URLEncoded() : nil
        let id = Hex.text(SecureRandom.bytes(count: 16))
        let now = clock.now
        let flow = PendingSignIn(id: id, owner: owner, program: program, service: request.service, account: request.account,
                                 provider: provider, redirectURI: request.redirectURI, state: state, verifier: verifier, nonce: nonce,
                                 expiresAt: now.addingTimeInterval(request.lifetime))
        try add(flow)
        let url = try request.settings.externalProvider.map {
            try Self.gotrueAuthorizationURL(authorization, flow: flow, externalProvider: $0, scopes: scopes)
        } ?? Self.authorizationURL(authorization, flow: flow, scopes: scopes)
        return SignInStart(flowID: id, authorizationURL: url, expiresAt: flow.expiresAt)
    }

    /// The service of `owner`'s sign-in `id` (for the policy check before completing it), or nil.
    func service(of id: String, owner: UInt32) -> String? {
        find(id, owner: owner)?.service
    }

    /// Completes `owner`'s sign-in `id` with the redirect's query. A callback whose state is not
    /// the sign-in's throws `.callbackMismatch` and leaves the sign-in waiting; anything after the
    /// state matched ends it, whatever the manager then makes of the answer.
    func complete(_ id: String, callbackQuery: SecureBytes, owner: UInt32) async throws -> Verified {
        guard let waiting = find(id, owner: owner) else { throw Self.noSignIn }
        if waiting.device != nil { return try await completeDevice(id, owner: owner) }
        // Whatever cannot be shown to carry this sign-in's state — unparseable, no state, another
        // state — is ignored and the sign-in waits on: only its own answer may end it.
        guard let callback = try? AuthorizationCallback(query: callbackQuery), callback.hasState(waiting.state) else {
            throw VaultError(.callbackMismatch, "the callback does not carry this sign-in's state (another sign-in's, none, or forged): it was ignored; the sign-in still waits for its own")
        }
        guard let flow = take(id, owner: owner) else { throw Self.noSignIn }
        if let error = callback.error {
            if error == "access_denied" {
                throw VaultError(.providerRejected, "the sign-in was declined at the provider (access_denied); nothing was stored")
            }
            let text = ProviderErrorText(sent: [flow.state]).clean(callback.errorDescription)
            throw VaultError(.providerRejected, "the provider ended the sign-in with \(error)\(text.map { ": \($0)" } ?? ""); nothing was stored")
        }
        if let issuer = callback.issuer, let expected = flow.provider.issuer, Array(issuer.utf8) != Array(expected.absoluteString.utf8) {
            // RFC 9207: an answer from another issuer (a mix-up attack) never reaches our token endpoint.
            throw VaultError(.providerRejected, "the callback came from issuer \(issuer.debugDescription), not \(expected.absoluteString); nothing was stored")
        }
        guard let code = callback.code, code.count > 0 else {
            throw VaultError.invalidArgument("the callback carries neither a code nor an error; nothing was stored, sign in again")
        }
        let response: TokenResponse
        let answer = flow.provider.kind == .supabase
            ? await oauth.exchangeGoTrue(code: code, verifier: flow.verifier, provider: flow.provider)
            : await oauth.exchange(code: code, verifier: flow.verifier, redirectURI: flow.redirectURI, provider: flow.provider)
        switch answer {
        case .tokens(let tokens): response = tokens
        case .invalidGrant:
            throw VaultError(.providerRejected, "the provider refused the code (invalid_grant: used already, expired, or issued to another sign-in); nothing was stored, sign in again")
        case .transient(let reason):
            throw VaultError(.unavailable, "the provider could not be reached to finish the sign-in (\(reason)); nothing was stored, sign in again")
        case .lost(let reason):
            // The code may have been spent with the answer; it is single-use, so only a new sign-in helps.
            throw VaultError(.unavailable, "the provider's answer to the sign-in was lost (\(reason)); nothing was stored, sign in again")
        case .rejected(let error, let description):
            throw VaultError(.providerRejected, "the provider refused the code with \(error)\(description.map { ": \($0)" } ?? ""); nothing was stored")
        }
        let verified: TokenResponse
        do {
            verified = try await openID.verifiedSignIn(response, provider: flow.provider, nonce: flow.nonce)
        } catch let error as VaultError where error.code == .invalidArgument {
            // The provider's own answer failed its checks (a wrong nonce…): signing in again is the way out.
            throw VaultError(.providerRejected, error.reason)
        }
        return (verified, flow)
    }

    /// Ends `owner`'s sign-in `id`; false when there was none.
    func cancel(_ id: String, owner: UInt32) -> Bool {
        take(id, owner: owner) != nil
    }

    /// Ends every sign-in of `owner` under way whose service `allowed` accepts; how many ended.
    /// `allowed` (the daemon's policy) is asked with the table's lock given back.
    func cancelAll(owner: UInt32, where allowed: (String) -> Bool) -> Int {
        let now = clock.now
        let ended = pending.withLock { $0.all(owner: owner, now: now) }.filter { allowed($0.service) }.map(\.id)
        return pending.withLock { table in ended.count(where: { table.take($0, owner: owner, now: now) != nil }) }
    }

    // MARK: The table

    func find(_ id: String, owner: UInt32) -> PendingSignIn? {
        let now = clock.now
        return pending.withLock { $0.find(id, owner: owner, now: now) }
    }

    func take(_ id: String, owner: UInt32) -> PendingSignIn? {
        let now = clock.now
        return pending.withLock { $0.take(id, owner: owner, now: now) }
    }

    func update(_ flow: PendingSignIn) {
        let now = clock.now
        pending.withLock { $0.update(flow, now: now) }
    }

    /// Adds `flow`, or refuses when the table or its owner's or program's share is full.
    func add(_ flow: PendingSignIn) throws {
        let now = clock.now
        try pending.withLock { try $0.add(flow, now: now) }
    }

    static let noSignIn = VaultError.invalidArgument(
        "no sign-in is under way with this flow id (it completed, expired, was cancelled, or another user began it): begin again")

    /// GoTrue's `/authorize` (api/external.go): the external provider, the S256 challenge, and
    /// `redirect_to` carrying the state, because GoTrue sends the browser back to `redirect_to` with
    /// `code` added to its query and has no state parameter of its own for the caller.
    static func gotrueAuthorizationURL(_ endpoint: URL, flow: PendingSignIn, externalProvider: String, scopes: [String]) throws -> URL {
        func text(_ bytes: SecureBytes) -> String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
        let back = flow.redirectURI.absoluteString
        var parameters: [(String, String)] = [
            ("provider", externalProvider),
            ("redirect_to", back + (flow.redirectURI.query == nil ? "?" : "&") + "state=" + text(flow.state)),
            ("code_challenge", text(flow.verifier.sha256().base64URLEncoded())), ("code_challenge_method", "s256"),
        ]
        if !scopes.isEmpty { parameters.append(("scopes", scopes.joined(separator: " "))) }
        let query = parameters.map { FormBody.encode(Array($0.0.utf8)) + "=" + FormBody.encode(Array($0.1.utf8)) }.joined(separator: "&")
        guard let url = URL(string: endpoint.absoluteString + "?" + query) else {
            throw VaultError.invalidArgument("the Supabase URL cannot take a query")
        }
        return url
    }

    /// Scopes as RFC 6749 §3.3 allows them, with `openid` first for an OpenID Connect sign-in.
    static func checkedScopes(_ scopes: [String], openID: Bool) throws -> [String] {
        guard scopes.count <= 32 else { throw VaultError.invalidArgument("at most 32 scopes may be asked for") }
        for scope in scopes {
            guard !scope.isEmpty, scope.utf8.count <= 256,
                  scope.utf8.allSatisfy({ $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }) else {
                throw VaultError.invalidArgument("a scope must be 1 to 256 printable characters without spaces, quotes or backslashes")
            }
        }
        return openID && !scopes.contains("openid") ? ["openid"] + scopes : scopes
    }

    /// The endpoint with the request's parameters (RFC 6749 §4.1.1, RFC 7636 §4.3, OpenID Connect
    /// Core §3.1.2.1) added to any query it has.
    static func authorizationURL(_ endpoint: URL, flow: PendingSignIn, scopes: [String]) throws -> URL {
        func text(_ bytes: SecureBytes) -> String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", flow.provider.clientID), ("redirect_uri", flow.redirectURI.absoluteString),
            ("state", text(flow.state)), ("code_challenge", text(flow.verifier.sha256().base64URLEncoded())),
            ("code_challenge_method", "S256"),
        ]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: " "))) }
        if let nonce = flow.nonce { parameters.append(("nonce", text(nonce))) }
        let query = parameters.map { FormBody.encode(Array($0.0.utf8)) + "=" + FormBody.encode(Array($0.1.utf8)) }.joined(separator: "&")
        let base = endpoint.absoluteString
        guard let url = URL(string: base + (endpoint.query == nil ? "?" : "&") + query) else {
            throw VaultError.invalidArgument("the authorization endpoint cannot take a query")
        }
        return url
    }
}
