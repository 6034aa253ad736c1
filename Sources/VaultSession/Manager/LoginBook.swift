import FoundationEssentials
import VaultCore

/// What a manager knows of logins between calls, and the schedule that follows from it: when each
/// login ends, how it is held back after failures, which ended in doubt, and when proactive
/// refreshes are due. A value with no I/O: the manager holds one, and asks it what to do.
///
/// The store stays the truth: every decision that changes a login re-reads it under the login's
/// lock. The book only says when to look, and why a login the store no longer has is gone.
struct LoginBook {
    /// A login as last read, for wiping it when it ends.
    struct Entry: Equatable {
        var endsAt: Date?
        var endReason: ReauthReason
        /// The tokens the entry was made for (``track(_:for:)``).
        var issuedAt: Date
        var accessTokenExpiry: Date
        var hasRefreshToken: Bool

        init(_ session: LoginSession) {
            endsAt = session.endsAt
            if let absolute = session.absoluteExpiresAt, absolute == session.endsAt {
                endReason = .lifetimeOver
            } else {
                endReason = session.refreshToken != nil ? .refreshTokenExpired : .noRefreshToken
            }
            issuedAt = session.issuedAt
            accessTokenExpiry = session.effectiveAccessTokenExpiry
            hasRefreshToken = session.refreshToken != nil
        }
    }

    private(set) var tracked: [ItemKey: Entry] = [:]
    /// The hold-back after failed attempts, per login.
    private(set) var retries: [ItemKey: RetryState] = [:]
    /// Logins this manager ended in doubt (``ReauthReason/rotationInDoubt``): their callers are told
    /// so, not `noSession`, until the login is signed in again or logged out. The caller whose
    /// request ended it may have given up waiting, so the next one must hear why.
    var endedInDoubt: Set<ItemKey> = []
    /// For ``nextWakeUp(at:configuration:dueShared:also:)`` only (the store's claim decides what is
    /// due): the earliest due time the store gave at the last look, and the due times written or
    /// postponed since.
    var storeRefreshDueAt: Date?
    var refreshDueWritten: [ItemKey: Date] = [:]

    /// How often a manager looks for due logins in a store that other managers write: well within
    /// the refresh lead (``SessionConfiguration/refreshAhead``), so a login another daemon wrote is
    /// refreshed in time.
    static var sharedDuePoll: TimeInterval { 10 }

    /// Notes `session` as read or written; true when the schedule changed (its end moved). The same
    /// tokens read again change nothing: every AutoLogin that reaches the store reads the login,
    /// and each wake-up is a round of background work, with its queries.
    mutating func track(_ session: LoginSession, for key: ItemKey) -> Bool {
        let entry = Entry(session)
        let known = tracked[key]
        guard known != entry else { return false }
        tracked[key] = entry
        return known?.endsAt != entry.endsAt
    }

    /// Keeps the due time just written for `key`; true when the driver may now have to wake
    /// sooner. A due time later than the one it replaces needs nothing: the driver wakes by the
    /// earlier one anyway and looks again then. Without proactive refresh, due times are written
    /// for the managers that refresh ahead, and wake nothing here.
    mutating func noteRefreshDue(_ due: Date?, for key: ItemKey, proactive: Bool) -> Bool {
        let previous = refreshDueWritten[key]
        refreshDueWritten[key] = due
        guard proactive, let due else { return false }
        return previous.map { due < $0 } ?? true
    }

    /// Forgets all but `endedInDoubt` of a login that is gone; true when the schedule changed (the
    /// book had its end or its due time). A login the book never had changes nothing: asking for
    /// one that is not there must not wake the driver for a round of queries.
    @discardableResult
    mutating func forget(_ key: ItemKey) -> Bool {
        retries[key] = nil
        let hadEnd = tracked.removeValue(forKey: key) != nil
        return refreshDueWritten.removeValue(forKey: key) != nil || hadEnd
    }

    /// A login signed in, restored or refreshed: no hold-back any more.
    mutating func succeeded(_ key: ItemKey) {
        retries[key] = nil
    }

    /// Counts a failed attempt and holds the login back for the retry policy's delay; returns the
    /// hold-back.
    @discardableResult
    mutating func failed(_ key: ItemKey, at now: Date, retry: RetryPolicy, random: Double) -> RetryState {
        let failures = (retries[key]?.failures ?? 0) + 1
        let state = RetryState(failures: failures, notBefore: now.addingTimeInterval(retry.delay(afterFailures: failures, random: random)),
                               lastAttemptAt: now)
        retries[key] = state
        return state
    }

    /// The failures counted so far for `key`.
    func failures(of key: ItemKey) -> Int { retries[key]?.failures ?? 0 }

    /// When `asker` may next reach the provider for `key` after failures, or nil when it may now.
    func heldBackUntil(_ key: ItemKey, asker: RefreshAsker, clientRetryFloor: TimeInterval) -> Date? {
        guard let retry = retries[key] else { return nil }
        switch asker {
        case .forced, .due: return nil
        case .background: return retry.notBefore
        case .client: return min(retry.notBefore, retry.lastAttemptAt.addingTimeInterval(clientRetryFloor))
        }
    }

    /// The logins whose end has come by `now`.
    func ended(at now: Date) -> [ItemKey] {
        tracked.compactMap { key, entry in entry.endsAt.map { now >= $0 } ?? false ? key : nil }
    }

    /// The earliest of: a tracked login's end, a due refresh (with proactive refresh; in a store
    /// other managers write, also the next look for their due logins), and the `also` dates.
    func nextWakeUp(at now: Date, proactive: Bool, dueShared: Bool, also: [Date?]) -> Date? {
        var dates = tracked.values.map(\.endsAt) + also
        if proactive {
            dates.append(storeRefreshDueAt)
            dates += refreshDueWritten.values.map { Optional($0) }
            if dueShared { dates.append(now.addingTimeInterval(Self.sharedDuePoll)) }
        }
        return dates.compactMap { $0 }.min()
    }

    /// When `session` is due for its proactive refresh, written with it (``DueRefreshes``): the
    /// access token's expiry minus the lead. nil without a refresh token, or when the login ends
    /// first. Written whatever ``SessionConfiguration/proactiveRefresh`` says: it is the login's
    /// schedule, for whichever manager of those sharing the store refreshes ahead of time.
    static func refreshDue(_ session: LoginSession, configuration: SessionConfiguration, random: Double) -> Date? {
        guard session.refreshToken != nil else { return nil }
        let lead = configuration.minValid + configuration.refreshAhead + configuration.refreshJitter * random
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
}

/// Who asks: the background work waits out the whole hold-back after failures; a client asking
/// is held back only by ``SessionConfiguration/clientRetryFloor``; a forced refresh is never held back.
/// A login claimed as due is refreshed as a forced one is: the store's due time already says it
/// is time, and carries the hold-back after failures, for every manager sharing the store.
enum RefreshAsker: Sendable {
    case client, background, forced, due
}
