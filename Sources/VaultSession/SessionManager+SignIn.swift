import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Sign-ins the manager runs (authorization code with PKCE, RFC 6749 §4.1 and RFC 7636): the caller
/// opens the URL ``beginSignIn(_:owner:)`` answers and hands back the redirect's query to
/// ``completeSignIn(_:callbackQuery:owner:)``.
///
/// Why the manager holds everything: the state, the S256 verifier and the nonce come from the
/// CSPRNG and never leave this process, so the code the browser carries is useless to whoever sees
/// it (the caller, the browser's history, a process listening on the port); the callback must bring
/// back the exact state (constant-time compare), and an `oidc` id token the exact nonce. A sign-in
/// completes at most once, only for the user who began it, and only before it expires.
extension SessionManager {
    /// Begins a sign-in for `owner` (the caller's uid) from `program` (the caller's executable, as
    /// the policy sees it; nil when unknown or in-process): each program of a user has its own cap.
    public func beginSignIn(_ request: SignInRequest, owner: UInt32, program: String? = nil) async throws -> SignInStart {
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
        if request.flow == .device { return try await beginDeviceSignIn(request, scopes: scopes, owner: owner, program: program) }
        try RedirectURIRule.check(request.redirectURI, flow: request.flow)
        let (provider, endpoint, _) = try await resolvedProvider(request.settings)
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
        try pendingSignIns.add(flow, now: now)
        let url = try request.settings.externalProvider.map {
            try Self.gotrueAuthorizationURL(authorization, flow: flow, externalProvider: $0, scopes: scopes)
        } ?? Self.authorizationURL(authorization, flow: flow, scopes: scopes)
        return SignInStart(flowID: id, authorizationURL: url, expiresAt: flow.expiresAt)
    }

    /// The service of `owner`'s sign-in `id` (for the policy check before completing it), or nil.
    public func signInService(_ id: String, owner: UInt32) -> String? {
        pendingSignIns.find(id, owner: owner, now: clock.now)?.service
    }

    /// Completes `owner`'s sign-in `id` with the redirect's query. A callback whose state is not
    /// the sign-in's throws `.callbackMismatch` and leaves the sign-in waiting; anything after the
    /// state matched ends it, stored or not.
    public func completeSignIn(_ id: String, callbackQuery: SecureBytes, owner: UInt32) async throws -> SignInResult {
        if let pending = pendingSignIns.find(id, owner: owner, now: clock.now), pending.device != nil {
            return try await completeDeviceSignIn(id, owner: owner)
        }
        guard let pending = pendingSignIns.find(id, owner: owner, now: clock.now) else { throw Self.noSignIn }
        // Whatever cannot be shown to carry this sign-in's state — unparseable, no state, another
        // state — is ignored and the sign-in waits on: only its own answer may end it.
        guard let callback = try? AuthorizationCallback(query: callbackQuery), callback.hasState(pending.state) else {
            throw VaultError(.callbackMismatch, "the callback does not carry this sign-in's state (another sign-in's, none, or forged): it was ignored; the sign-in still waits for its own")
        }
        guard let flow = pendingSignIns.take(id, owner: owner, now: clock.now) else { throw Self.noSignIn }
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
            verified = try await verifiedSignIn(response, provider: flow.provider, nonce: flow.nonce)
        } catch let error as VaultError where error.code == .invalidArgument {
            // The provider's own answer failed its checks (a wrong nonce…): signing in again is the way out.
            throw VaultError(.providerRejected, error.reason)
        }
        return try await storeVerifiedSignIn(verified, flow: flow)
    }

    /// Stores a verified sign-in's answer through the one save path, under the flow's account or
    /// ``defaultAccount(of:kind:)``.
    ///
    /// The provider's names (the verified user id and e-mail) pass ``ProviderChosenName``; when the
    /// user named an account that holds a login, the verified user must be its user (``checkNamedAccount(_:named:verified:kind:)``).
    func storeVerifiedSignIn(_ verified: TokenResponse, flow: PendingSignIn) async throws -> SignInResult {
        if let user = verified.userID { try ProviderChosenName.check(user, what: "the user id") }
        if let email = verified.email { try ProviderChosenName.check(email, what: "the e-mail address") }
        guard let account = flow.account ?? Self.defaultAccount(of: verified, kind: flow.provider.kind) else {
            throw VaultError.invalidArgument("the sign-in named no account and its answer carries no verified user; nothing was stored")
        }
        let key = try ItemKey(service: flow.service, account: account)
        try await checkNamedAccount(key, named: flow.account != nil, verified: verified, kind: flow.provider.kind)
        let status = try await storeSignIn(verified, provider: flow.provider, for: key, maximumLifetime: nil)
        logger.info("signed in", metadata: ["service": "\(logName(flow.service))", "kind": "\(flow.provider.kind.rawValue)"])
        return SignInResult(key: key, status: status)
    }

    /// The account a sign-in without one is stored under: the verified user as the provider names
    /// users. E-mail-keyed providers (supabase, as a password sign-in stores under the e-mail) by
    /// the verified e-mail, else the subject; oidc by the id token's verified `sub`.
    static func defaultAccount(of verified: TokenResponse, kind: ProviderKind) -> String? {
        switch kind {
        case .supabase, .firebase: return verified.email ?? verified.userID
        case .oidc: return verified.userID
        case .oauth2: return nil  // an oauth2 answer's user_id is not verified by anyone
        }
    }

    /// A sign-in for a named account that already holds a login of a verified user (oidc: its
    /// `sub`; supabase, firebase: the provider's user id) must come back as that same user.
    /// Otherwise another account's sign-in (its code delivered to this receiver first) would
    /// replace the user's login, and the user's apps would get the other account's tokens.
    ///
    /// Why not "the account name must be the verified user": an account is the app's label for a
    /// login (`VaultLogin(service:account:)`, `$USER` in the example), not the provider's id; a
    /// first sign-in binds the label to whoever signs in, and that is the user because nobody
    /// else sees the sign-in's state (it is on no command line). An oauth2 answer names no
    /// verified user: there is nothing to compare.
    func checkNamedAccount(_ key: ItemKey, named: Bool, verified: TokenResponse, kind: ProviderKind) async throws {
        guard named, kind != .oauth2, let stored = try await storedSession(key), stored.provider.kind != .oauth2,
              let bound = stored.userID else { return }
        if let user = verified.userID, user.utf8.elementsEqual(bound.utf8) { return }
        let who = verified.userID.map(ProviderChosenName.escaped) ?? "a user it did not name"
        throw VaultError(.providerRejected, "the account \(ProviderChosenName.escaped(key.account)) holds the login of user \(ProviderChosenName.escaped(bound)), but the provider signed in \(who): nothing was stored; sign in at the provider as that user, or log out of \(ProviderChosenName.escaped(key.account)) first (`sortedvault session logout`), or name another account")
    }

    /// Ends `owner`'s sign-in `id`; false when there was none.
    public func cancelSignIn(_ id: String, owner: UInt32) -> Bool {
        pendingSignIns.take(id, owner: owner, now: clock.now) != nil
    }

    /// Ends every sign-in of `owner` under way whose service `allowed` accepts (the daemon passes
    /// its policy check, so a program ends only sign-ins of services it may sign in to), whichever
    /// program began them; how many ended. Nothing was stored for them.
    public func cancelSignIns(owner: UInt32, where allowed: @Sendable (String) -> Bool) -> Int {
        pendingSignIns.takeAll(owner: owner, now: clock.now, where: allowed)
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
