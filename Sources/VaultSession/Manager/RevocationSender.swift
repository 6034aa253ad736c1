import FoundationEssentials
import Logging
import Synchronization
import VaultCore

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

/// Queues and sends the revocations (RFC 7009) of logins that ended and of tokens no login may
/// keep, through the store's ``RevocationOutbox``: an entry is queued in the same step as its
/// login's wipe, sent by whoever queued it once that caller holds no lock, and otherwise claimed
/// and retried by the background work of any manager sharing the outbox until the provider
/// confirms, refuses, or the tokens are dead anyway.
///
/// Its one piece of state is when it next has something to do (``nextCheck``), behind a lock no
/// await spans; the manager's ``SessionManager/nextWakeUp()`` reads it.
final class RevocationSender: Sendable {
    let outbox: any RevocationOutbox
    private let oauth: OAuthClient
    private let clock: any VaultClock
    private let configuration: SessionConfiguration
    private let random: @Sendable () -> Double
    private let logger: Logger
    private let schedule: ScheduleSignal
    /// When the outbox next has an entry due that this sender knows of (its own hold-backs), or
    /// when to look again in an outbox other managers share.
    private let checkAt = Mutex<Date?>(nil)

    init(outbox: any RevocationOutbox, oauth: OAuthClient, clock: any VaultClock, configuration: SessionConfiguration,
         random: @escaping @Sendable () -> Double, logger: Logger, schedule: ScheduleSignal) {
        self.outbox = outbox
        self.oauth = oauth
        self.clock = clock
        self.configuration = configuration
        self.random = random
        self.logger = logger
        self.schedule = schedule
    }

    /// How many entries one claim of due revocations takes.
    static var batch: Int { 16 }

    /// How often a sender looks for due entries in an outbox that other managers share.
    static var sharedOutboxPoll: TimeInterval { 30 }

    /// How long a sender or a claimer has an outbox entry to itself: long enough for both of a
    /// login's revocation requests (the lease is at least two request deadlines).
    var claim: TimeInterval { 2 * configuration.refreshLease }

    /// When ``retryDue(at:)`` next has something to do, or nil.
    var nextCheck: Date? { checkAt.withLock { $0 } }

    /// Makes ``nextCheck`` no later than `date`.
    func wake(at date: Date) {
        checkAt.withLock { $0 = $0.map { min($0, date) } ?? date }
        schedule.changed()
    }

    /// Queues the revocation of `session`'s tokens when its provider has a revocation endpoint,
    /// deleting the login's item in the same step when `wiping`. With `sendNow` the entry is held
    /// for the caller, who sends it (``deliver(_:)``) once it no longer holds the login's lock;
    /// otherwise it is due for the background work at once.
    func enqueue(of session: LoginSession, for key: ItemKey, wiping: Bool, sendNow: Bool) async throws -> PendingRevocation? {
        guard session.provider.revocationEndpoint != nil else { return nil }
        let revocation = QueuedRevocation(for: session, login: key, at: clock.now)
        let entry = try await outbox.enqueueRevocation(
            revocation.sealedRecord(), for: try SessionItems.item(for: key), wiping: wiping,
            holdFor: sendNow ? claim : 0, discardAfter: discardDate(for: session))
        if !sendNow { wake(at: clock.now) }
        return PendingRevocation(entry: entry, revocation: revocation)
    }

    /// Tokens a refresh brought that may not be stored (a logout, a new sign-in, or a manager that
    /// took over the expired lease came first): their revocation is queued, as a logout's is.
    func discard(_ tokens: LoginSession, for key: ItemKey, sendNow: Bool) async throws -> PendingRevocation? {
        logger.notice("a refresh answered after its login was logged out, replaced or taken over; its tokens are discarded")
        return try await enqueue(of: tokens, for: key, wiping: false, sendNow: sendNow)
    }

    /// A queued revocation matters until the provider confirms it, or until its tokens are dead
    /// anyway (the refresh token's own expiry), at most ``SessionConfiguration/revocationQueueLifetime``.
    private func discardDate(for session: LoginSession) -> Date {
        var until = clock.now.addingTimeInterval(configuration.revocationQueueLifetime)
        if let end = session.refreshToken != nil ? session.refreshTokenExpiresAt : session.effectiveAccessTokenExpiry {
            until = min(until, max(end, clock.now.addingTimeInterval(60)))
        }
        return until
    }

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
            wake(at: clock.now.addingTimeInterval(delay))
            logger.notice("revocation queued: the provider did not answer", metadata: [
                "retryInSeconds": "\(Int(delay))", "reason": "\(reason)",
            ])
            return .queued
        case .rejected(let error):
            logger.warning("the provider refused the revocation; dropped", metadata: ["error": "\(error)"])
            try await outbox.revocationDelivered(entry)
            return .dropped
        }
    }

    /// Sends `pending` in order until the provider first cannot be reached; the rest stay queued,
    /// due for any manager once their claim runs out, instead of each costing a request deadline.
    func deliverUntilUnreachable(_ pending: [PendingRevocation]) async throws -> (revoked: Int, queued: Int) {
        var revoked = 0, queued = 0
        for (index, revocation) in pending.enumerated() {
            switch try await deliver(revocation) {
            case .revoked: revoked += 1
            case .dropped: break
            case .queued:
                queued += pending.count - index
                wake(at: clock.now.addingTimeInterval(claim))
                return (revoked, queued)
            }
        }
        return (revoked, queued)
    }

    /// The background work's step: claims and delivers the due entries when ``nextCheck`` has
    /// come. Returns false when the store is locked (the round stops; it resumes after unlock).
    func retryDue(at now: Date) async -> Bool {
        let due = checkAt.withLock { checkAt -> Bool in
            guard let at = checkAt, at <= now else { return false }
            checkAt = nil
            return true
        }
        guard due else { return true }
        do {
            try await deliverDue()
        } catch let error as VaultError where error.code == .locked {
            wake(at: now)
            return false
        } catch {
            logger.warning("queued revocations could not be claimed", metadata: ["error": "\(error)"])
            wake(at: now.addingTimeInterval(configuration.retry.delay(afterFailures: 1, random: random())))
        }
        // Other managers queue and fail entries this one does not hear of: look again in a while.
        if outbox.outboxIsShared { wake(at: now.addingTimeInterval(Self.sharedOutboxPoll)) }
        return true
    }

    /// Claims the due outbox entries, batch by batch, and delivers each. A payload that does not
    /// open stays queued (counted as stuck after enough attempts), never dropped unseen.
    private func deliverDue() async throws {
        while true {
            let batch = try await outbox.claimDueRevocations(limit: Self.batch, for: claim)
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
                    wake(at: clock.now.addingTimeInterval(claim))
                }
            }
            if batch.count < Self.batch { return }
        }
    }

    /// The outbox's backlog, with stuck meaning ``SessionConfiguration/revocationStuckAfter``
    /// failed attempts or more.
    func backlog() async throws -> RevocationBacklog {
        try await outbox.revocationBacklog(stuckAfter: configuration.revocationStuckAfter)
    }
}
