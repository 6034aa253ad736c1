import FoundationEssentials
import Synchronization
import VaultCore

/// What a manager keeps of its logins in memory, behind one lock: the ``LoginBook`` (ends,
/// hold-backs, due times) and the refreshed tokens a failed store write left behind. Each change
/// that may move a wake-up tells the driver (``ScheduleSignal``), and each change of a login tells
/// its watchers (``SessionEventHub``), after the lock is given back.
///
/// Every method is one critical section with no I/O and no `await`, so any thread may call it: a
/// refresh flight or a round of background work records what it did without a hop onto another
/// executor. The store stays the truth: what changes a login's record runs under the login's key
/// lock (``SessionManager/keyLocks``) and reads the store again.
final class LoginRecords: Sendable {
    /// Refreshed tokens the store could not take, with the lease they were got under: written,
    /// fenced by that lease, before anything else reads the login.
    struct Uncommitted: Sendable {
        let session: LoginSession
        let lease: RefreshLease
    }

    private struct State {
        var book = LoginBook()
        var uncommitted: [ItemKey: Uncommitted] = [:]
    }

    private let state = Mutex(State())
    /// Whether any tokens wait to be written, for the lock-free warm read
    /// (``SessionManager/autoLoginNow(_:)``), which then leaves the call to the refresh flight.
    let hasUncommitted = Atomic<Bool>(false)
    /// Who is told that ``SessionManager/nextWakeUp()`` moved.
    let schedule: ScheduleSignal
    /// The subscribers of ``SessionManager/events()``.
    let events = SessionEventHub()
    private let clock: any VaultClock
    private let configuration: SessionConfiguration
    private let random: @Sendable () -> Double

    init(clock: any VaultClock, configuration: SessionConfiguration, random: @escaping @Sendable () -> Double, schedule: ScheduleSignal) {
        self.clock = clock
        self.configuration = configuration
        self.random = random
        self.schedule = schedule
    }

    // MARK: Logins

    /// Notes `session` as read or written (``LoginBook/track(_:for:)``).
    func track(_ session: LoginSession, for key: ItemKey) {
        if state.withLock({ $0.book.track(session, for: key) }) { schedule.changed() }
    }

    /// A new login written (a sign-in, a restore): no hold-back, and watchers see it `saved`.
    func saved(_ session: LoginSession, for key: ItemKey) {
        changed(session, for: key, event: .saved)
    }

    /// A refresh's new tokens written: the hold-back cleared, watchers told.
    func refreshed(_ session: LoginSession, for key: ItemKey) {
        changed(session, for: key, event: .refreshed)
    }

    private func changed(_ session: LoginSession, for key: ItemKey, event: SessionEvent.Kind) {
        let moved = state.withLock {
            $0.book.succeeded(key)
            return $0.book.track(session, for: key)
        }
        if moved { schedule.changed() }
        publish(event, key)
    }

    /// Forgets all but the doubt of a login that is gone, and with `event`, tells its watchers why.
    func forget(_ key: ItemKey, event: SessionEvent.Kind? = nil) {
        if state.withLock({ $0.book.forget(key) }) { schedule.changed() }
        if let event { publish(event, key) }
    }

    /// A login the store no longer has: forgotten, and the reason its callers hear. One the store
    /// purged at its end is told to watchers as `expired`; one this manager ended in doubt stays in
    /// doubt (``LoginBook/endedInDoubt``) until signed in again or logged out.
    func gone(_ key: ItemKey) -> ReauthReason {
        let now = clock.now  // read before the lock: a clock may read a file
        let (ended, reason, moved) = state.withLock { state -> (Bool, ReauthReason, Bool) in
            let known = state.book.tracked[key]
            let moved = state.book.forget(key)
            if let known, let endsAt = known.endsAt, now >= endsAt { return (true, known.endReason, moved) }
            return (false, state.book.endedInDoubt.contains(key) ? .rotationInDoubt : .noSession, moved)
        }
        if moved { schedule.changed() }
        if ended { publish(.expired, key) }
        return reason
    }

    /// Marks `key` ended in doubt (``ReauthReason/rotationInDoubt``), or with `false`, no longer:
    /// signed in again or logged out.
    func setEndedInDoubt(_ key: ItemKey, _ inDoubt: Bool) {
        state.withLock {
            if inDoubt { $0.book.endedInDoubt.insert(key) } else { $0.book.endedInDoubt.remove(key) }
        }
    }

    func publish(_ kind: SessionEvent.Kind, _ key: ItemKey) {
        events.publish(SessionEvent(kind: kind, key: key, at: clock.now))
    }

    // MARK: Hold-backs and due times

    /// Holds `key` back after a failure (``LoginBook/failed(_:at:retry:random:)``); returns until when.
    @discardableResult
    func noteFailure(_ key: ItemKey) -> Date {
        let now = clock.now, retry = configuration.retry, random = random()
        return state.withLock { $0.book.failed(key, at: now, retry: retry, random: random).notBefore }
    }

    func failures(of key: ItemKey) -> Int { state.withLock { $0.book.failures(of: key) } }

    /// When a failed attempt next allows another, for the login's status.
    func retryNotBefore(_ key: ItemKey) -> Date? { state.withLock { $0.book.retries[key]?.notBefore } }

    /// When `asker` may next reach the provider for `key` (``LoginBook/heldBackUntil(_:asker:clientRetryFloor:)``).
    func heldBackUntil(_ key: ItemKey, asker: RefreshAsker) -> Date? {
        let floor = configuration.clientRetryFloor
        return state.withLock { $0.book.heldBackUntil(key, asker: asker, clientRetryFloor: floor) }
    }

    /// When `session` is due for its proactive refresh (``LoginBook/refreshDue(_:configuration:random:)``).
    func refreshDue(_ session: LoginSession) -> Date? {
        LoginBook.refreshDue(session, configuration: configuration, random: random())
    }

    /// Keeps the due time just written for `key` (``LoginBook/noteRefreshDue(_:for:proactive:)``).
    func noteRefreshDue(_ due: Date?, for key: ItemKey) {
        let proactive = configuration.proactiveRefresh
        if state.withLock({ $0.book.noteRefreshDue(due, for: key, proactive: proactive) }) { schedule.changed() }
    }

    func isTracked(_ key: ItemKey) -> Bool { state.withLock { $0.book.tracked[key] != nil } }

    func endedLogins(at now: Date) -> [ItemKey] { state.withLock { $0.book.ended(at: now) } }

    /// The earliest wake-up the records ask for (``LoginBook/nextWakeUp(at:proactive:dueShared:also:)``);
    /// tokens waiting to be written are tried again a ``SessionConfiguration/leaseRecheck`` from now.
    func nextWakeUp(at now: Date, dueShared: Bool, also: Date?) -> Date? {
        let proactive = configuration.proactiveRefresh, recheck = configuration.leaseRecheck
        return state.withLock {
            let uncommittedRetry = $0.uncommitted.isEmpty ? nil : now.addingTimeInterval(recheck)
            return $0.book.nextWakeUp(at: now, proactive: proactive, dueShared: dueShared, also: [also, uncommittedRetry])
        }
    }

    /// Sets the earliest due time the store holds, from `read`. The store knows every due time
    /// this manager wrote before the read; those written while it answers are kept, and what other
    /// managers write is found by the next look (``LoginBook/sharedDuePoll``). A failed read keeps them all.
    func lookAgainForDue(_ read: () async throws -> Date?) async throws {
        let written = state.withLock { state in
            defer { state.book.refreshDueWritten = [:] }
            return state.book.refreshDueWritten
        }
        do {
            let earliest = try await read()
            state.withLock { $0.book.storeRefreshDueAt = earliest }
        } catch {
            state.withLock { $0.book.refreshDueWritten.merge(written) { newer, _ in newer } }
            throw error
        }
    }

    // MARK: Writes left in memory

    /// Keeps refreshed tokens the store could not take, to be written by the next read of the login
    /// or by the background work, whichever comes first, while the lease lasts.
    func keepUncommitted(_ session: LoginSession, lease: RefreshLease, for key: ItemKey) {
        updateUncommitted { $0[key] = Uncommitted(session: session, lease: lease) }
        schedule.changed()
    }

    func uncommitted(_ key: ItemKey) -> Uncommitted? { state.withLock { $0.uncommitted[key] } }

    /// Drops what waits to be written for `key`: written, or replaced by a newer login or a wipe.
    /// With `written`, only that very write (by its lease): one kept meanwhile stays.
    func dropUncommitted(_ key: ItemKey, written: Uncommitted? = nil) {
        updateUncommitted { uncommitted in
            if let written, uncommitted[key]?.lease != written.lease { return }
            uncommitted[key] = nil
        }
    }

    var uncommittedKeys: [ItemKey] { state.withLock { Array($0.uncommitted.keys) } }

    private func updateUncommitted(_ change: (inout [ItemKey: Uncommitted]) -> Void) {
        state.withLock {
            change(&$0.uncommitted)
            hasUncommitted.store(!$0.uncommitted.isEmpty, ordering: .releasing)
        }
    }
}
