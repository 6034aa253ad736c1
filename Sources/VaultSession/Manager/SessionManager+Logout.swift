import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

extension SessionManager {
    /// Logs out: wipes the login from the store, then revokes its tokens at the provider's
    /// revocation endpoint (RFC 7009) when one is configured.
    ///
    /// Idempotent: logging out with no login stored succeeds with `wasLoggedIn == false`. The
    /// revocation goes into the store's outbox (``RevocationOutbox``) in the same step as the wipe,
    /// so a crash in the middle loses neither; when the provider cannot be reached the login is
    /// still wiped at once and the revocation stays queued until it goes through, sent by whichever
    /// manager sharing the store claims it.
    ///
    /// It never waits for the provider while holding the login: a refresh under way is left to
    /// find the login gone, and whatever tokens it brings back are revoked, never stored.
    public func logout(_ key: ItemKey) async throws -> LogoutResult {
        records.setEndedInDoubt(key, false)  // asked to end it: from now on there is simply no login
        let (pending, wasLoggedIn, kind) = try await endLogin(key)
        guard let pending else {
            return LogoutResult(wasLoggedIn: wasLoggedIn, revoked: false, revocationQueued: false,
                                providerCannotRevoke: kind.map { !$0.canRevoke } ?? false)
        }
        let outcome = try await revocations.deliver(pending)
        return LogoutResult(wasLoggedIn: wasLoggedIn, revoked: outcome == .revoked, revocationQueued: outcome == .queued)
    }

    /// A logout's store work, under the login's lock: the wipe with its revocation queued in the
    /// same step. Returns the revocation to send, whether a login was there, and its provider kind.
    func endLogin(_ key: ItemKey) async throws -> (PendingRevocation?, Bool, ProviderKind?) {
        try await withKeyLock(key) { () -> (PendingRevocation?, Bool, ProviderKind?) in
            guard let session = try await logins.read(key) else {
                records.forget(key)
                return (nil, false, nil)
            }
            let pending = try await logins.wipe(key, event: .loggedOut, revoking: session)
            return (pending, true, session.provider.kind)
        }
    }
}
