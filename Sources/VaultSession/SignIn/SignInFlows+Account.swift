import FoundationEssentials
import VaultCore

extension SignInFlows {
    /// The key a finished sign-in is stored under: the flow's account, or ``defaultAccount(of:kind:)``.
    /// The provider's names (the verified user id and e-mail) pass ``ProviderChosenName`` first.
    static func key(for verified: TokenResponse, flow: PendingSignIn) throws -> ItemKey {
        if let user = verified.userID { try ProviderChosenName.check(user, what: "the user id") }
        if let email = verified.email { try ProviderChosenName.check(email, what: "the e-mail address") }
        guard let account = flow.account ?? defaultAccount(of: verified, kind: flow.provider.kind) else {
            throw VaultError.invalidArgument("the sign-in named no account and its answer carries no verified user; nothing was stored")
        }
        return try ItemKey(service: flow.service, account: account)
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
    ///
    /// `stored` is the login under `key` now; the manager reads it only for a named account of a
    /// provider that verifies its users.
    static func checkNamedAccount(_ key: ItemKey, stored: LoginSession?, verified: TokenResponse) throws {
        guard let stored, stored.provider.kind != .oauth2, let bound = stored.userID else { return }
        if let user = verified.userID, user.utf8.elementsEqual(bound.utf8) { return }
        let who = verified.userID.map(ProviderChosenName.escaped) ?? "a user it did not name"
        throw VaultError(.providerRejected, "the account \(ProviderChosenName.escaped(key.account)) holds the login of user \(ProviderChosenName.escaped(bound)), but the provider signed in \(who): nothing was stored; sign in at the provider as that user, or log out of \(ProviderChosenName.escaped(key.account)) first (`sortedvault session logout`), or name another account")
    }
}
