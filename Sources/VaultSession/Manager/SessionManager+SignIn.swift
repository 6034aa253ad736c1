import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Sign-ins the manager runs (``SignInFlows``: browser, device and password), and the one save path
/// their answers take. The flows run outside the actor; only storing the answer comes to it.
extension SessionManager {
    /// Begins a sign-in for `owner` (the caller's uid) from `program` (the caller's executable, as
    /// the policy sees it; nil when unknown or in-process): each program of a user has its own cap.
    public nonisolated func beginSignIn(_ request: SignInRequest, owner: UInt32, program: String? = nil) async throws -> SignInStart {
        try await signIns.begin(request, owner: owner, program: program)
    }

    /// The service of `owner`'s sign-in `id` (for the policy check before completing it), or nil.
    public nonisolated func signInService(_ id: String, owner: UInt32) -> String? {
        signIns.service(of: id, owner: owner)
    }

    /// Completes `owner`'s sign-in `id` with the redirect's query (a device sign-in: polls until
    /// the provider's answer is final) and stores the login. A callback whose state is not the
    /// sign-in's throws `.callbackMismatch` and leaves the sign-in waiting; anything after the
    /// state matched ends it, stored or not.
    public nonisolated func completeSignIn(_ id: String, callbackQuery: SecureBytes, owner: UInt32) async throws -> SignInResult {
        let (verified, flow) = try await signIns.complete(id, callbackQuery: callbackQuery, owner: owner)
        return try await storeVerifiedSignIn(verified, flow: flow)
    }

    /// Signs in (or, with `create`, signs up) with an e-mail address and password, and stores the login.
    public nonisolated func signInWithPassword(_ request: PasswordSignIn) async throws -> SignInResult {
        let (response, provider, key) = try await signIns.password(request)
        let status = try await storeSignIn(response, provider: provider, for: key, maximumLifetime: nil)
        logger.info("signed in", metadata: ["service": "\(logName(request.service))", "kind": "\(provider.kind.rawValue)"])
        return SignInResult(key: key, status: status)
    }

    /// Ends `owner`'s sign-in `id`; false when there was none.
    public nonisolated func cancelSignIn(_ id: String, owner: UInt32) -> Bool {
        signIns.cancel(id, owner: owner)
    }

    /// Ends every sign-in of `owner` under way whose service `allowed` accepts (the daemon passes
    /// its policy check, so a program ends only sign-ins of services it may sign in to), whichever
    /// program began them; how many ended. Nothing was stored for them.
    public nonisolated func cancelSignIns(owner: UInt32, where allowed: @Sendable (String) -> Bool) -> Int {
        signIns.cancelAll(owner: owner, where: allowed)
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
}
