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
                if let session = try await logins.read(revocation.login), session.loginID == revocation.loginID,
                   session.accessToken == revocation.accessToken {
                    try await logins.wipe(revocation.login, event: .loggedOut)
                }
            }
        }
        for item in items {
            guard let key = SessionItems.login(of: item.key), !records.isTracked(key) else { continue }
            if let session = try? await logins.read(key) {
                records.track(session, for: key)
                try await store.restoreRefreshDue(records.refreshDue(session), of: item.key, itemExpiresAt: session.endsAt)
            }
        }
        try await records.lookAgainForDue { try await store.earliestRefreshDue() }
        // Entries left by an earlier run (or, in a shared outbox, by any manager) are due now.
        if !unconfirmed.isEmpty || revocations.outbox.outboxIsShared { revocations.wake(at: clock.now) }
        records.schedule.changed()
    }

    /// When ``runDueWork()`` next has something to do, or nil when nothing is scheduled.
    public func nextWakeUp() -> Date? {
        records.nextWakeUp(at: clock.now, dueShared: store.dueRefreshesAreShared, also: revocations.nextCheck)
    }

    /// Does what is due at the clock's "now": wiping logins that ended, proactive refreshes (the
    /// logins the store says are due, claimed with their lease), and retrying queued revocations: one,
    /// ``DueWork`` round. Failures are logged and rescheduled; a locked store stops the round (it
    /// resumes after unlock).
    public func runDueWork() async {
        await DueWork(manager: self, now: clock.now).run()
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
    public func observeSchedule(_ observer: @escaping @Sendable () -> Void) {
        records.schedule.observe(observer)
    }

    // MARK: Events

    /// A stream of what happens to logins, from now on (``SessionEventHub``). It ends when the
    /// caller stops iterating.
    public func events() -> AsyncStream<SessionEvent> {
        records.events.subscribe()
    }
}
