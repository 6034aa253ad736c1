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
    /// logins the store says are due, claimed with their lease), and retrying queued revocations: one,
    /// ``DueWork`` round. Failures are logged and rescheduled; a locked store stops the round (it
    /// resumes after unlock).
    public nonisolated func runDueWork() async {
        await DueWork(manager: self, now: clock.now).run()
    }

    /// Sets the store's gauges (backlog, logins in doubt); a store that cannot answer now leaves
    /// them as they were. Each round of background work ends with it, and a metrics endpoint calls
    /// it before each scrape, so a scrape sees what `fleet status` says now.
    public nonisolated func recordStoreMetrics() async {
        guard let backlog = try? await revocations.backlog(), let inDoubt = try? await store.loginsInDoubt() else { return }
        metrics.record(backlog, loginsInDoubt: inDoubt)
    }

    /// How many revocations wait for the provider (in the whole outbox, when it is shared).
    public nonisolated var queuedRevocationCount: Int {
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

    // MARK: For the background work (``DueWork``)

    var uncommittedKeys: [ItemKey] { Array(uncommitted.keys) }

    func endedLogins(at now: Date) -> [ItemKey] { book.ended(at: now) }

    /// Holds `key` back after a failure (of the background work, so it does not spin on a login
    /// that keeps failing for a non-transient reason; of a refresh, ``RefreshFlight``); returns
    /// until when.
    @discardableResult
    func noteFailure(_ key: ItemKey) -> Date {
        book.failed(key, at: clock.now, retry: configuration.retry, random: random()).notBefore
    }

    /// Reads the earliest due time the store holds, after a round of claims. The store knows every
    /// due time this manager wrote so far; those written while it answers are kept, and what
    /// other managers write is found by the next look (``LoginBook/sharedDuePoll``).
    func lookAgainForDue() async throws {
        let written = book.refreshDueWritten
        book.refreshDueWritten = [:]
        do {
            book.storeRefreshDueAt = try await store.earliestRefreshDue()
        } catch {
            book.refreshDueWritten.merge(written) { newer, _ in newer }
            throw error
        }
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
