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
        let unconfirmed = try await revocations.outbox.revocationsToReconcile()
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
            guard let key = SessionItems.login(of: item.key), book.tracked[key] == nil else { continue }
            if let session = try? await storedSession(key) {
                track(session, for: key)
                try await store.restoreRefreshDue(refreshDue(session), of: item.key, itemExpiresAt: session.endsAt)
            }
        }
        book.storeRefreshDueAt = try await store.earliestRefreshDue()
        // Entries left by an earlier run (or, in a shared outbox, by any manager) are due now.
        if !unconfirmed.isEmpty || revocations.outbox.outboxIsShared { revocations.wake(at: clock.now) }
        schedule.changed()
    }

    /// When ``runDueWork()`` next has something to do, or nil when nothing is scheduled.
    public func nextWakeUp() -> Date? {
        let now = clock.now
        // Refreshed tokens the store could not take: try again soon, while their lease lasts.
        let uncommittedRetry = uncommitted.isEmpty ? nil : now.addingTimeInterval(configuration.leaseRecheck)
        return book.nextWakeUp(at: now, proactive: configuration.proactiveRefresh, dueShared: store.dueRefreshesAreShared,
                               also: [revocations.nextCheck, uncommittedRetry])
    }

    /// Does what is due at the clock's "now": wiping logins that ended, proactive refreshes (the
    /// logins the store says are due, claimed with their lease: `SessionManager+DueRefresh.swift`),
    /// and retrying queued revocations. Failures are logged and rescheduled; a locked store stops
    /// the round (it resumes after unlock).
    public func runDueWork() async {
        let now = clock.now
        let lead = configuration.minValid + configuration.refreshAhead + configuration.refreshJitter
        guard await writeUncommitted(), await endEndedLogins(at: now, lead: lead), await claimAndRefreshDue(lead: lead),
              await revocations.retryDue(at: now) else { return }
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
        for key in book.ended(at: now) {
            do {
                let result = try await sharedFlight(key, asker: .background, validFor: lead)
                logger.debug("proactive session work", metadata: ["service": "\(logName(key.service))", "outcome": "\(result.outcome)"])
            } catch let error as VaultError where error.code == .locked {
                return false
            } catch {
                logger.warning("proactive session work failed", metadata: ["error": "\(error)"])
                // Do not spin on a login that keeps failing for a non-transient reason.
                book.failed(key, at: now, retry: configuration.retry, random: random())
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

    /// Sets the store's gauges (backlog, logins in doubt); a store that cannot answer now leaves
    /// them as they were. Each round of background work ends with it, and a metrics endpoint calls
    /// it before each scrape, so a scrape sees what `fleet status` says now.
    public func recordStoreMetrics() async {
        guard let backlog = try? await revocations.backlog(), let inDoubt = try? await store.loginsInDoubt() else { return }
        metrics.record(backlog, loginsInDoubt: inDoubt)
    }

    /// How many revocations wait for the provider (in the whole outbox, when it is shared).
    public var queuedRevocationCount: Int {
        get async { (try? await revocations.outbox.revocationBacklog(stuckAfter: .max).pending) ?? 0 }
    }

    /// Calls `observer` whenever the schedule changes, so a sleeping driver can wake early.
    public nonisolated func observeSchedule(_ observer: @escaping @Sendable () -> Void) {
        schedule.observe(observer)
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

    /// When `session` is due for its proactive refresh (``LoginBook/refreshDue(_:configuration:random:)``).
    func refreshDue(_ session: LoginSession) -> Date? {
        LoginBook.refreshDue(session, configuration: configuration, random: random())
    }

    func track(_ session: LoginSession, for key: ItemKey) {
        if book.track(session, for: key) { schedule.changed() }
    }

    /// Keeps the due time just written for `key` (``LoginBook/noteRefreshDue(_:for:proactive:)``).
    func noteRefreshDue(_ due: Date?, for key: ItemKey) {
        if book.noteRefreshDue(due, for: key, proactive: configuration.proactiveRefresh) { schedule.changed() }
    }

    func forget(_ key: ItemKey) {
        book.forget(key)
        schedule.changed()
    }
}
