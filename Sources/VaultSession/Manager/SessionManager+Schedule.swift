import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

extension SessionManager {
    /// Reads the stored logins and queued revocations: run it when the store opens (daemon start,
    /// unlock). Finishes logouts a crash interrupted, wipes logins that ended meanwhile, gives a
    /// store that keeps due times in memory those of its logins, and schedules proactive refreshes
    /// and the delivery of queued revocations.
    public func resume() async throws {
        let items = try await store.list(service: nil)
        let unconfirmed = try await outbox.revocationsToReconcile()
        for entry in unconfirmed {
            guard let revocation = try? QueuedRevocation(id: entry.id, sealedRecord: entry.payload) else { continue }
            // A logout that crashed after queueing and before wiping (a store that cannot do both
            // in one step): finish the wipe. Only the very tokens queued are wiped: discarded
            // tokens of a refresh that came too late are queued too, while their sign-in lives on
            // with newer ones.
            try await withKeyLock(revocation.login) {
                if let session = try await storedSession(revocation.login), session.loginID == revocation.loginID,
                   session.accessToken == revocation.accessToken {
                    try await wipe(revocation.login, event: .loggedOut)
                }
            }
        }
        for item in items {
            guard let key = SessionItems.login(of: item.key), tracked[key] == nil else { continue }
            if let session = try? await storedSession(key) {
                track(session, for: key)
                try await store.restoreRefreshDue(refreshDue(session), of: item.key, itemExpiresAt: session.endsAt)
            }
        }
        storeRefreshDueAt = try await store.earliestRefreshDue()
        // Entries left by an earlier run (or, in a shared outbox, by any manager) are due now.
        if !unconfirmed.isEmpty || outbox.outboxIsShared { wakeForRevocations(at: clock.now) }
        scheduleChanged()
    }

    /// When ``runDueWork()`` next has something to do, or nil when nothing is scheduled.
    public func nextWakeUp() -> Date? {
        var earliest: Date?
        func consider(_ date: Date?) {
            guard let date else { return }
            earliest = earliest.map { min($0, date) } ?? date
        }
        for entry in tracked.values { consider(entry.endsAt) }
        if configuration.proactiveRefresh {
            consider(storeRefreshDueAt)
            for due in refreshDueWritten.values { consider(due) }
            // Other managers write logins this one never read: look for due ones from time to time.
            if store.dueRefreshesAreShared { consider(clock.now.addingTimeInterval(Self.sharedDuePoll)) }
        }
        consider(revocationCheckAt)
        // Refreshed tokens the store could not take: try again soon, while their lease lasts.
        if !uncommitted.isEmpty { consider(clock.now.addingTimeInterval(configuration.leaseRecheck)) }
        return earliest
    }

    /// Does what is due at the clock's "now": wiping logins that ended, proactive refreshes (the
    /// logins the store says are due, claimed with their lease: `SessionManager+DueRefresh.swift`),
    /// and retrying queued revocations. Failures are logged and rescheduled; a locked store stops
    /// the round (it resumes after unlock).
    public func runDueWork() async {
        let now = clock.now
        let lead = configuration.minValid + configuration.refreshAhead + configuration.refreshJitter
        guard await writeUncommitted(), await endEndedLogins(at: now, lead: lead), await claimAndRefreshDue(lead: lead),
              await retryRevocations(at: now) else { return }
        await recordStoreMetrics()
    }

    // Each step of the round: false when the store is locked, which ends the round.

    private func writeUncommitted() async -> Bool {
        for key in Array(uncommitted.keys) {
            do {
                // Reading the login writes what a failed write left in memory first.
                try await withKeyLock(key) { _ = try await storedSession(key) }
            } catch let error as VaultError where error.code == .locked {
                return false
            } catch {
                logger.notice("refreshed tokens still cannot be stored; trying again", metadata: ["error": "\(error)"])
            }
        }
        return true
    }

    private func endEndedLogins(at now: Date, lead: TimeInterval) async -> Bool {
        for (key, entry) in tracked {
            guard entry.endsAt.map({ now >= $0 }) ?? false else { continue }
            do {
                let result = try await sharedFlight(key, asker: .background, validFor: lead)
                logger.debug("proactive session work", metadata: ["service": "\(logName(key.service))", "outcome": "\(result.outcome)"])
            } catch let error as VaultError where error.code == .locked {
                return false
            } catch {
                logger.warning("proactive session work failed", metadata: ["error": "\(error)"])
                // Do not spin on a login that keeps failing for a non-transient reason.
                let failures = (retries[key]?.failures ?? 0) + 1
                retries[key] = RetryState(failures: failures, notBefore: now.addingTimeInterval(
                    configuration.retry.delay(afterFailures: failures, random: random())), lastAttemptAt: now)
            }
        }
        return true
    }

    private func claimAndRefreshDue(lead: TimeInterval) async -> Bool {
        guard configuration.proactiveRefresh else { return true }
        do {
            return try await refreshDueLogins(validFor: lead)
        } catch let error as VaultError where error.code == .locked {
            return false
        } catch {
            logger.warning("due refreshes could not be claimed", metadata: ["error": "\(error)"])
            return true
        }
    }

    private func retryRevocations(at now: Date) async -> Bool {
        guard let due = revocationCheckAt, due <= now else { return true }
        revocationCheckAt = nil
        do {
            try await deliverDueRevocations()
        } catch let error as VaultError where error.code == .locked {
            wakeForRevocations(at: now)
            return false
        } catch {
            logger.warning("queued revocations could not be claimed", metadata: ["error": "\(error)"])
            wakeForRevocations(at: now.addingTimeInterval(configuration.retry.delay(afterFailures: 1, random: random())))
        }
        // Other managers queue and fail entries this one does not hear of: look again in a while.
        if outbox.outboxIsShared { wakeForRevocations(at: now.addingTimeInterval(Self.sharedOutboxPoll)) }
        return true
    }

    /// Sets the store's gauges (backlog, logins in doubt); a store that cannot answer now leaves
    /// them as they were. Each round of background work ends with it, and a metrics endpoint calls
    /// it before each scrape, so a scrape sees what `fleet status` says now.
    public func recordStoreMetrics() async {
        guard let backlog = try? await revocationBacklog(), let inDoubt = try? await store.loginsInDoubt() else { return }
        metrics.record(backlog, loginsInDoubt: inDoubt)
    }

    /// How often a manager looks for due entries in an outbox that other managers share.
    static var sharedOutboxPoll: TimeInterval { 30 }

    /// How often a manager looks for due logins in a store that other managers write: well within
    /// the refresh lead (``Configuration/refreshAhead``), so a login another daemon wrote is refreshed
    /// in time.
    static var sharedDuePoll: TimeInterval { 10 }

    /// How many revocations wait for the provider (in the whole outbox, when it is shared).
    public var queuedRevocationCount: Int {
        get async { (try? await outbox.revocationBacklog(stuckAfter: .max).pending) ?? 0 }
    }

    /// Calls `observer` whenever the schedule changes, so a sleeping driver can wake early.
    public func observeSchedule(_ observer: @escaping @Sendable () -> Void) {
        scheduleObserver = observer
    }

    // MARK: Events

    /// A stream of what happens to logins, from now on (``SessionEventHub``). It ends when the
    /// caller stops iterating.
    public func events() -> AsyncStream<SessionEvent> {
        eventHub.subscribe()
    }

    func publish(_ kind: SessionEvent.Kind, _ key: ItemKey) {
        eventHub.publish(SessionEvent(kind: kind, key: key, at: clock.now))
    }

    // MARK: Tracking

    /// When `session` is due for its proactive refresh, written with it (``DueRefreshes``): the
    /// access token's expiry minus this manager's lead. nil without a refresh token, or when the
    /// login ends first. Written whatever ``Configuration/proactiveRefresh`` says: it is the login's
    /// schedule, for whichever manager of those sharing the store refreshes ahead of time.
    func refreshDue(_ session: LoginSession) -> Date? {
        guard session.refreshToken != nil else { return nil }
        let lead = configuration.minValid + configuration.refreshAhead + configuration.refreshJitter * random()
        // A token living less than the lead would be due again the moment it was refreshed (a
        // request loop): refresh it halfway through its life instead.
        let lifetime = max(session.effectiveAccessTokenExpiry.timeIntervalSince(session.issuedAt), 0)
        // And never sooner than 30 s after the tokens were issued, whatever the provider says
        // (`expires_in: 0` would otherwise be due at once, again and again).
        let due = max(session.effectiveAccessTokenExpiry.addingTimeInterval(-min(lead, lifetime / 2)),
                      session.issuedAt.addingTimeInterval(30))
        if let end = session.endsAt, due >= end { return nil }
        return due
    }

    func track(_ session: LoginSession, for key: ItemKey) {
        // The same tokens read again change nothing and wake nothing: every AutoLogin that reaches
        // the store reads the login (all of a fleet daemon's do), and each wake-up is a round of
        // background work, with its queries.
        let known = tracked[key]
        if let known, known.issuedAt == session.issuedAt,
           known.accessTokenExpiry == session.effectiveAccessTokenExpiry, known.endsAt == session.endsAt,
           known.hasRefreshToken == (session.refreshToken != nil) {
            return
        }
        let endReason: ReauthReason
        if let absolute = session.absoluteExpiresAt, absolute == session.endsAt {
            endReason = .lifetimeOver
        } else {
            endReason = session.refreshToken != nil ? .refreshTokenExpired : .noRefreshToken
        }
        tracked[key] = Tracked(endsAt: session.endsAt, endReason: endReason,
                               issuedAt: session.issuedAt, accessTokenExpiry: session.effectiveAccessTokenExpiry,
                               hasRefreshToken: session.refreshToken != nil)
        if known?.endsAt != session.endsAt { scheduleChanged() }
    }

    /// Keeps the due time just written for `key`, and wakes the driver only when it may now have to
    /// wake sooner: a due time later than the one it replaces needs nothing, since the driver wakes by
    /// the earlier one anyway and looks again then (a refresh always moves its login's due time on, and
    /// a wake-up is a round of background work with its queries); without proactive refresh, due
    /// times are written for the managers that refresh ahead, and wake nothing here.
    func noteRefreshDue(_ due: Date?, for key: ItemKey) {
        let previous = refreshDueWritten[key]
        refreshDueWritten[key] = due
        guard configuration.proactiveRefresh, let due else { return }
        if previous.map({ due < $0 }) ?? true { scheduleChanged() }
    }

    func forget(_ key: ItemKey) {
        tracked[key] = nil
        retries[key] = nil
        refreshDueWritten[key] = nil
        scheduleChanged()
    }

    func scheduleChanged() {
        scheduleObserver?()
    }
}
