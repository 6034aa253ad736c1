import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A queued revocation as its sender holds it: what to revoke, and its entry in the outbox.
struct PendingRevocation: Sendable {
    let entry: OutboxEntry
    let revocation: QueuedRevocation
}

/// What became of one delivery attempt.
enum RevocationOutcome: Sendable, Equatable {
    /// The provider confirmed; the entry is gone.
    case revoked
    /// The provider could not be reached or said "later": the entry stays, retried by the background work.
    case queued
    /// Nothing can be sent (the provider refused for good, or cannot revoke): the entry is gone, logged.
    case dropped
}

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
        endedInDoubt.remove(key)  // asked to end it: from now on there is simply no login
        let (pending, wasLoggedIn, kind) = try await endLogin(key)
        guard let pending else {
            return LogoutResult(wasLoggedIn: wasLoggedIn, revoked: false, revocationQueued: false,
                                providerCannotRevoke: kind.map { !$0.canRevoke } ?? false)
        }
        let outcome = try await deliver(pending)
        return LogoutResult(wasLoggedIn: wasLoggedIn, revoked: outcome == .revoked, revocationQueued: outcome == .queued)
    }

    /// A logout's store work, under the login's lock: the wipe with its revocation queued in the
    /// same step. Returns the revocation to send, whether a login was there, and its provider kind.
    func endLogin(_ key: ItemKey) async throws -> (PendingRevocation?, Bool, ProviderKind?) {
        try await withKeyLock(key) { () -> (PendingRevocation?, Bool, ProviderKind?) in
            guard let session = try await storedSession(key) else {
                forget(key)
                return (nil, false, nil)
            }
            let pending = try await wipe(key, event: .loggedOut, revoking: session)
            return (pending, true, session.provider.kind)
        }
    }

    /// Queues the revocation of `session`'s tokens in the outbox when its provider has a revocation
    /// endpoint, deleting the login's item in the same step when `wiping`. With `sendNow` the entry
    /// is held for the caller, who sends it once it no longer holds the login's lock; otherwise it
    /// is due for the background work at once.
    func enqueueRevocation(of session: LoginSession, for key: ItemKey, wiping: Bool, sendNow: Bool) async throws -> PendingRevocation? {
        guard session.provider.revocationEndpoint != nil else { return nil }
        let revocation = QueuedRevocation(for: session, login: key, at: clock.now)
        let entry = try await outbox.enqueueRevocation(
            revocation.sealedRecord(), for: try SessionItems.item(for: key), wiping: wiping,
            holdFor: sendNow ? revocationClaim : 0, discardAfter: revocationDiscardDate(for: session))
        if !sendNow { wakeForRevocations(at: clock.now) }
        return PendingRevocation(entry: entry, revocation: revocation)
    }

    /// Tokens a refresh brought that may not be stored (a logout, a new sign-in, or a manager that
    /// took over the expired lease came first): their revocation is queued, as a logout's is, and
    /// sent by the caller once it no longer holds the login's lock (`sendNow`), or by the
    /// background work.
    func discard(_ tokens: LoginSession, for key: ItemKey, sendNow: Bool = true) async throws -> PendingRevocation? {
        logger.notice("a refresh answered after its login was logged out, replaced or taken over; its tokens are discarded")
        return try await enqueueRevocation(of: tokens, for: key, wiping: false, sendNow: sendNow)
    }

    /// A queued revocation matters until the provider confirms it, or until its tokens are dead
    /// anyway (the refresh token's own expiry), at most ``Configuration/revocationQueueLifetime``.
    private func revocationDiscardDate(for session: LoginSession) -> Date {
        var until = clock.now.addingTimeInterval(configuration.revocationQueueLifetime)
        if let end = session.refreshToken != nil ? session.refreshTokenExpiresAt : session.effectiveAccessTokenExpiry {
            until = min(until, max(end, clock.now.addingTimeInterval(60)))
        }
        return until
    }

    /// How long a sender or a claimer has an outbox entry to itself: long enough for both of a
    /// login's revocation requests (the lease is at least two request deadlines).
    var revocationClaim: TimeInterval { 2 * configuration.refreshLease }

    /// Sends the revocation and records the outcome in the outbox: confirmed → removed; a transient
    /// failure → kept, retried after the hold-back; a refusal → removed, logged.
    func deliver(_ pending: PendingRevocation) async throws -> RevocationOutcome {
        let entry = pending.entry
        guard pending.revocation.provider.revocationEndpoint != nil else {
            try await outbox.revocationDelivered(entry)
            return .dropped
        }
        switch await oauth.revokeLogin(pending.revocation) {
        case .revoked:
            try await outbox.revocationDelivered(entry)
            return .revoked
        case .transient(let reason):
            let delay = configuration.retry.delay(afterFailures: entry.attempts + 1, random: random())
            try await outbox.revocationFailed(entry, retryIn: delay, code: "provider unavailable")
            wakeForRevocations(at: clock.now.addingTimeInterval(delay))
            logger.notice("revocation queued: the provider did not answer", metadata: [
                "retryInSeconds": "\(Int(delay))", "reason": "\(reason)",
            ])
            return .queued
        case .rejected(let error):
            logger.warning("the provider refused the revocation; dropped", metadata: [
                "error": "\(error)",
            ])
            try await outbox.revocationDelivered(entry)
            return .dropped
        }
    }

    /// Claims the due outbox entries, batch by batch, and delivers each. A payload that does not
    /// open stays queued (counted as stuck after enough attempts), never dropped unseen.
    func deliverDueRevocations() async throws {
        while true {
            let batch = try await outbox.claimDueRevocations(limit: Self.revocationBatch, for: revocationClaim)
            for entry in batch {
                guard let revocation = try? QueuedRevocation(id: entry.id, sealedRecord: entry.payload) else {
                    logger.error("a queued revocation does not open; it stays queued", metadata: ["entry": "\(entry.id)"])
                    try await outbox.revocationFailed(entry, retryIn: configuration.retry.cap, code: "payload does not open")
                    continue
                }
                do {
                    _ = try await deliver(PendingRevocation(entry: entry, revocation: revocation))
                } catch let error as VaultError where error.code == .locked {
                    throw error
                } catch {
                    // It stays in the outbox; its claim runs out and it is due again.
                    logger.warning("queued revocation failed", metadata: ["error": "\(error)"])
                    wakeForRevocations(at: clock.now.addingTimeInterval(revocationClaim))
                }
            }
            if batch.count < Self.revocationBatch { return }
        }
    }

    static var revocationBatch: Int { 16 }

    /// Makes ``nextWakeUp()`` no later than `date`, for the outbox's entries.
    func wakeForRevocations(at date: Date) {
        revocationCheckAt = revocationCheckAt.map { min($0, date) } ?? date
        scheduleChanged()
    }

    /// The revocation backlog of the store's outbox, with stuck meaning
    /// ``Configuration/revocationStuckAfter`` failed attempts or more.
    public func revocationBacklog() async throws -> RevocationBacklog {
        try await outbox.revocationBacklog(stuckAfter: configuration.revocationStuckAfter)
    }
}
