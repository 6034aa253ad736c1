import Foundation
import VaultCore
import VaultCrypto

extension SessionManager {
    /// Logs out: wipes the login from the store, then revokes its tokens at the provider's
    /// revocation endpoint (RFC 7009) when one is configured.
    ///
    /// Idempotent: logging out with no login stored succeeds with `wasLoggedIn == false`. The
    /// revocation is journalled (sealed) before the login is wiped, so a crash in the middle is
    /// finished by ``resume()``; when the provider cannot be reached the login is still wiped at
    /// once and the revocation stays queued until it goes through.
    ///
    /// It never waits for the provider while holding the login: a refresh under way is left to
    /// find the login gone, and whatever tokens it brings back are revoked, never stored.
    public func logout(_ key: ItemKey) async throws -> LogoutResult {
        let (queued, wasLoggedIn, kind) = try await withKeyLock(key) { () -> (QueuedRevocation?, Bool, ProviderKind?) in
            guard let session = try await storedSession(key) else {
                forget(key)
                return (nil, false, nil)
            }
            let queued = try await journalRevocation(of: session, for: key)
            try await wipe(key, event: .loggedOut)
            return (queued, true, session.provider.kind)
        }
        guard let queued else {
            return LogoutResult(wasLoggedIn: wasLoggedIn, revoked: false, revocationQueued: false,
                                providerCannotRevoke: kind.map { !$0.canRevoke } ?? false)
        }
        let revoked = try await revoke(queued)
        return LogoutResult(wasLoggedIn: wasLoggedIn, revoked: revoked, revocationQueued: !revoked && queuedRevocations[queued.id] != nil)
    }

    /// Writes the sealed record of the revocation of `session`'s tokens, when its provider has a
    /// revocation endpoint. Not due for the background work for a minute: the caller sends it
    /// right away, once it no longer holds the login's lock.
    func journalRevocation(of session: LoginSession, for key: ItemKey) async throws -> QueuedRevocation? {
        guard session.provider.revocationEndpoint != nil else { return nil }
        let revocation = QueuedRevocation(for: session, login: key, at: clock.now)
        try await store.store(revocation.sealedRecord(), for: try revocation.item, options: try revocationOptions(for: session))
        queuedRevocations[revocation.id] = RetryState(failures: 0, notBefore: clock.now.addingTimeInterval(60))
        return revocation
    }

    /// Tokens a refresh brought that may not be stored (a logout, a new sign-in, or a manager that
    /// took over the expired lease came first): their revocation is journalled, as a logout's is,
    /// and sent by the caller once it no longer holds the login's lock (retried by the background
    /// work when the provider is unreachable).
    func discard(_ tokens: LoginSession, for key: ItemKey) async throws -> QueuedRevocation? {
        logger.notice("a refresh answered after its login was logged out, replaced or taken over; its tokens are discarded")
        return try await journalRevocation(of: tokens, for: key)
    }

    /// A queued revocation lives until the provider confirms it, or until it no longer matters
    /// (the refresh token's own expiry), at most ``Configuration/revocationQueueLifetime``.
    private func revocationOptions(for session: LoginSession) throws -> StoreOptions {
        var until = clock.now.addingTimeInterval(configuration.revocationQueueLifetime)
        if let end = session.refreshToken != nil ? session.refreshTokenExpiresAt : session.effectiveAccessTokenExpiry {
            until = min(until, max(end, clock.now.addingTimeInterval(60)))
        }
        return try StoreOptions(label: "sortedvault queued revocation", expiresAt: until)
    }

    /// Sends the revocation; returns true once the provider confirmed (the record is then deleted).
    /// A transient failure keeps it queued with a hold-back; a refusal drops it, logged.
    func revoke(_ revocation: QueuedRevocation) async throws -> Bool {
        guard revocation.provider.revocationEndpoint != nil else {
            try await dropQueued(revocation.id)
            return false
        }
        switch await oauth.revokeLogin(revocation) {
        case .revoked:
            break
        case .transient(let reason):
            let failures = (queuedRevocations[revocation.id]?.failures ?? 0) + 1
            let delay = configuration.retry.delay(afterFailures: failures, random: random())
            queuedRevocations[revocation.id] = RetryState(failures: failures, notBefore: clock.now.addingTimeInterval(delay))
            scheduleChanged()
            logger.notice("revocation queued: the provider did not answer", metadata: [
                "retryInSeconds": "\(Int(delay))", "reason": "\(reason)",
            ])
            return false
        case .rejected(let error):
            logger.warning("the provider refused the revocation; dropped", metadata: [
                "error": "\(error)",
            ])
            try await dropQueued(revocation.id)
            return false
        }
        try await dropQueued(revocation.id)
        return true
    }

    private func dropQueued(_ id: String) async throws {
        queuedRevocations[id] = nil
        do {
            try await store.delete(try ItemKey(service: SessionItems.revocationService, account: id))
        } catch let error as VaultError where error.code == .notFound {}
    }
}
