import FoundationEssentials
import Logging
import VaultCore
import VaultCrypto

/// The refresh flight: one provider request per login at a time, shared by every caller of this
/// manager, and made under the store's refresh lease (``LoginLeases``), so by one manager of all
/// those sharing the store.
///
/// A refresh runs in four steps; the login's key lock is held only around the store work, and
/// nothing at all (no lock, no transaction, no connection) across the network:
/// 1. under the lock, read the login and decide (valid, ended, held back, or ask the provider);
/// 2. claim the login's lease. When another manager holds it, wait for its result (a change of the
///    stored login, or its lease running out) and start again from step 1. When it is granted, read
///    the login once more: another manager may have refreshed it between step 1 and the claim, and
///    the provider is then asked nothing (its refresh token was rotated; sending it would be a
///    reuse, which a strict provider answers by revoking the login);
/// 3. without the lock, record the request under the lease (``LoginLeases/recordRequest(under:)``),
///    then ask the provider (bounded by the transport's deadline, which the lease outlives twice over);
/// 4. under the lock again, re-read the login and apply the answer only if it is still the login
///    the request was made for (same sign-in, same refresh token), writing it only while the lease
///    is still the latest. A logout, a new sign-in, or another manager that took over an expired
///    lease wins: the answer is discarded, and tokens it brought are never stored and are revoked
///    (``RevocationSender/discard(_:for:sendNow:)``).
///
/// So a `Logout` never waits for a slow provider, and a refresh that returns after a logout, or
/// after its lease was overtaken, can neither bring back nor overwrite the login.
///
/// An answer that may have reached the provider but never came back (the deadline passed, the
/// connection broke, the holder died after recording its request) leaves the login "in doubt": the provider may have rotated
/// its refresh token. The next claim says so, and that refresh is the one retry with the same
/// token. If its answer is lost too, or the provider calls the token invalid, the login ends with
/// `rotationInDoubt`: no further request could tell which token is current.
///
/// A flight is this struct: one refresh of one login, started by ``SessionManager/sharedFlight(_:asker:validFor:claimed:)``
/// and shared by every caller through the manager's ``SingleFlight`` table. It runs steps 2 and 3
/// itself, and step 4 through the manager's ``StoredLogins`` (the write and the wipe) and
/// ``LoginRecords`` (the hold-backs). Step 1, which reads the manager's book of logins to decide, is the manager's
/// (``SessionManager/plan(_:asker:validFor:)``). Steps 1 and 4 run under the login's key lock.
struct RefreshFlight: Sendable {
    let manager: SessionManager
    let key: ItemKey
    let asker: RefreshAsker
    /// How long the answered token must stay valid.
    let validFor: TimeInterval

    private var store: any DueRefreshes { manager.store }
    private var clock: any VaultClock { manager.clock }
    private var configuration: SessionConfiguration { manager.configuration }

    /// What follows a round.
    private enum Next {
        case answer(AutoLoginResult)
        /// Another round, for the login as it is now.
        case again(LoginSession)
    }

    /// Told when the login changed under two rounds in a row.
    private static var changedMeanwhile: String { "the login changed while it was being refreshed; ask again" }

    /// The one place a refresh request is made. `claimed` is used by the first round instead of a
    /// claim. Waiting for other managers is bounded: the holder's lease, then one of whoever
    /// follows. When the login changed under the request (a refresh token rotated elsewhere, a new
    /// sign-in that already needs a refresh) there is one more round, never more.
    func run(claimed: DueRefresh?) async throws -> AutoLoginResult {
        var claimed = claimed
        let item = try SessionItems.item(for: key)
        let waitUntil = clock.now.addingTimeInterval(2 * configuration.refreshLease)
        var supersededRounds = 0
        while true {
            // Subscribed before the store is read, so no change after the read goes unseen.
            let hints = await store.changes(of: item)
            let round: RefreshRound
            if let due = claimed {
                claimed = nil
                round = try await claimedRound(due)
            } else {
                let session: LoginSession, usedToken: SecureBytes
                switch try await manager.keyLocks.withLock(key, { try await manager.plan(key, asker: asker, validFor: validFor) }) {
                case .answer(let result): return result
                case .request(let stored, let refreshToken): (session, usedToken) = (stored, refreshToken)
                }
                let claim: LeaseClaim
                do {
                    claim = try await store.claimRefresh(of: item, owner: manager.leaseOwner, duration: configuration.refreshLease)
                } catch let error as VaultError where error.code == .notFound && supersededRounds == 0 {
                    // Deleted since step 1 read it (a logout, another manager's end in doubt): read
                    // again, which answers why it is gone.
                    supersededRounds += 1
                    continue
                }
                switch claim {
                case .granted(let lease, let answersLost):
                    round = try await withRefreshLease(lease) { held in
                        try await request(session, usedToken: usedToken, under: &held, answersLost: answersLost)
                    }
                case .held(_, let until):
                    guard clock.now < waitUntil else {
                        return .offline(manager.validGrant(session), reason: "another sortedvault instance is refreshing this login and has not finished; ask again")
                    }
                    await waitForHolder(hints, until: until)
                    continue
                }
            }
            switch await next(after: round) {
            case .answer(let result): return result
            case .again(let latest):
                supersededRounds += 1
                if supersededRounds == 2 { return .offline(manager.validGrant(latest), reason: Self.changedMeanwhile) }
            }
        }
    }

    /// After a round: the answer for the callers, or the login to try again with. Revocations the
    /// round queued are sent here, with no lease or lock held.
    private func next(after round: RefreshRound) async -> Next {
        switch round {
        case .done(let result, let revocation):
            if let revocation { _ = try? await manager.revocations.deliver(revocation) }
            return .answer(result)
        case .changed(let current, let revocation):
            if let revocation { _ = try? await manager.revocations.deliver(revocation) }
            guard let current else { return .answer(.reauthRequired(.noSession)) }
            if current.isValid(at: clock.now, forAtLeast: validFor) { return .answer(.valid(AccessGrant(current))) }
            return .again(current)
        case .overtaken(let session):
            return .again(session)
        }
    }

    /// A round started under the lease a claim of due logins took (``DueWork``):
    /// step 1 under it, and steps 2 to 4 if step 1 asks the provider; given back if it asks nothing.
    private func claimedRound(_ due: DueRefresh) async throws -> RefreshRound {
        try await withRefreshLease(due.lease) { held in
            switch try await manager.keyLocks.withLock(key, { try await manager.plan(key, asker: asker, validFor: validFor) }) {
            case .answer(let result):
                // A claimed login that needs no request (gone, ended, valid, no refresh token).
                return .done(result)
            case .request(let session, let refreshToken):
                return try await request(session, usedToken: refreshToken, under: &held, answersLost: due.answersLost)
            }
        }
    }

    /// Steps 2 (once the lease is granted) to 4, under `held`: read the login again, record the
    /// request, ask the provider, and apply its answer.
    private func request(_ session: LoginSession, usedToken: SecureBytes, under held: inout HeldLease,
                         answersLost: Int) async throws -> RefreshRound {
        let current = try await manager.keyLocks.withLock(key) { try await manager.logins.read(key) }
        guard let current, current.loginID == session.loginID, current.refreshToken.map({ $0 == usedToken }) ?? false else {
            return .changed(current: current)
        }
        let answer: RefreshAnswer
        if answersLost >= 2 {
            // Two answers lost one after another: no third request, it could not tell which token is current.
            answer = .lost("the answers to the last refresh requests were lost")
        } else {
            // Recorded before it is sent: only a lease whose request may have gone out counts as
            // a lost answer if it runs out. A store that cannot record it hears of no request.
            guard try await store.recordRequest(under: held.lease) else {
                // Overtaken since the claim (it ran out and another took it, or a sign-in or a
                // logout replaced the login): the lease is no longer this manager's to give back.
                held.ending = .spent
                return .overtaken(session)
            }
            answer = await manager.openIDLogins.verified(await manager.oauth.refresh(session, refreshToken: usedToken), for: session)
        }
        let round: RefreshRound
        do {
            round = try await manager.keyLocks.withLock(key) {
                try await apply(answer, to: session, usedToken: usedToken, under: &held, inDoubt: answersLost >= 1)
            }
        } catch {
            manager.metrics.refresh("failed")
            throw error
        }
        manager.metrics.refresh(round.outcome)
        return round
    }

    /// Runs `body` under `lease`, then gives the lease back as the body left it
    /// (``HeldLease/ending``), whether the body returned or threw: no path can forget it.
    private func withRefreshLease<T>(_ lease: RefreshLease, _ body: (inout HeldLease) async throws -> T) async throws -> T {
        var held = HeldLease(lease: lease)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(&held))
        } catch {
            result = .failure(error)
        }
        switch held.ending {
        case .giveBack: await Self.giveBack(lease, answerLost: false, store: store, logger: manager.logger)
        case .answerLost: await Self.giveBack(lease, answerLost: true, store: store, logger: manager.logger)
        case .spent: break
        }
        return try result.get()
    }

    /// Step 2's wait: until the store hints at a change, the holder's lease runs out (`until`), or
    /// ``SessionConfiguration/leaseRecheck`` passes, whichever comes first.
    private func waitForHolder(_ hints: AsyncStream<Void>?, until: Date) async {
        let now = clock.now
        // A lease the store calls live though it ended by this clock: the clocks differ; look again later.
        let seconds = until > now ? min(until.timeIntervalSince(now), configuration.leaseRecheck) : configuration.leaseRecheck
        let sleeper = manager.sleeper
        await withTaskGroup(of: Void.self) { group in
            if let hints { group.addTask { for await _ in hints { return } } }
            group.addTask { try? await sleeper.sleep(seconds: seconds) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Step 4, under the key lock: applies the provider's answer to the login it was made for.
    /// `inDoubt`: the answer to an earlier request with the same refresh token was lost.
    private func apply(_ answer: RefreshAnswer, to session: LoginSession, usedToken: SecureBytes, under held: inout HeldLease,
                       inDoubt: Bool) async throws -> RefreshRound {
        let current: LoginSession?
        do {
            current = try await manager.logins.read(key)
        } catch {
            // The store went away while the provider answered. New tokens may mean the refresh
            // token was rotated: keep them, still under this lease (which fences the write if the
            // login changes meanwhile), and write them once the store is back.
            switch answer {
            case .tokens(let response):
                keepUncommitted(session.refreshed(with: response, at: clock.now), held.lease, error)
                held.ending = .spent
            case .lost: held.ending = .answerLost
            case .invalidGrant, .transient, .rejected: break
            }
            throw error
        }
        let unchanged = current.map { $0.loginID == session.loginID && ($0.refreshToken.map { $0 == usedToken } ?? false) } ?? false
        switch answer {
        case .tokens(let response):
            let next = session.refreshed(with: response, at: clock.now)
            guard unchanged else { return .changed(current: current, revocation: try await manager.revocations.discard(next, for: key, sendNow: true)) }
            return try await applyTokens(next, under: &held)
        case .invalidGrant, .lost:
            // Another refresh, a new sign-in or a logout may have won: only the login the request
            // was made for is ended or held back.
            guard unchanged, let current else { return .changed(current: current) }
            return try await applyFailure(answer, to: current, under: &held, inDoubt: inDoubt)
        case .transient(let reason):
            guard let current else { return .done(.reauthRequired(.noSession)) }
            return .done(.offline(manager.validGrant(current), reason: await holdBack(reason, lease: held.lease)))
        case .rejected(let error, let description):
            guard current != nil else { return .done(.reauthRequired(.noSession)) }
            // Not retried by the background work before the hold-back a failure earns.
            let failures = manager.records.failures(of: key) + 1
            await postponeDue(held.lease, until: clock.now.addingTimeInterval(
                configuration.retry.delay(afterFailures: failures, random: manager.random())))
            throw VaultError(.providerRejected,
                "the provider refused to refresh this login (\(error)\(description.map { ": \($0)" } ?? "")); check the provider settings saved with it (client id and secret, API key, endpoints), then sign in again")
        }
    }

    /// Step 4 for a rejected refresh token or a lost answer, to the login the request was made for.
    private func applyFailure(_ answer: RefreshAnswer, to current: LoginSession, under held: inout HeldLease,
                              inDoubt: Bool) async throws -> RefreshRound {
        if inDoubt {
            // Should the wipe fail, the lease running out still tells the next claim.
            held.ending = .answerLost
            let round = try await endInDoubt(current)
            held.ending = .spent
            return round
        }
        guard case .lost(let reason) = answer else {
            try await manager.logins.wipe(key, event: .reauthRequired)
            held.ending = .spent
            return .done(.reauthRequired(.refreshRejected))
        }
        held.ending = .answerLost
        return .done(.offline(manager.validGrant(current), reason: await holdBack(reason, lease: held.lease)))
    }

    /// Step 4 for new tokens, made for the login still stored: written while `held` is still the
    /// login's latest lease.
    private func applyTokens(_ next: LoginSession, under held: inout HeldLease) async throws -> RefreshRound {
        let written: Bool
        do {
            written = try await manager.logins.write(next, for: key, holding: held.lease)
        } catch {
            // The provider may have rotated the refresh token: keep the new one in memory and
            // write it, still under this lease, before anything else touches this login.
            keepUncommitted(next, held.lease, error)
            held.ending = .spent
            throw error
        }
        // Written, the write ended the lease; not written, it is another manager's now.
        held.ending = .spent
        guard written else {
            manager.metrics.fencedCommit()
            // The lease ran out and another manager took the login over (or a sign-in or a
            // logout replaced it): this answer came too late, as one after a logout does.
            return .changed(current: try await manager.logins.read(key), revocation: try await manager.revocations.discard(next, for: key, sendNow: true))
        }
        manager.records.refreshed(next, for: key)
        return .done(.refreshed(AccessGrant(next)))
    }

    /// Keeps refreshed tokens the store could not take, to be written by the next read of the login
    /// or by the background work (``SessionManager/runDueWork()``), whichever comes first, while the lease lasts.
    private func keepUncommitted(_ next: LoginSession, _ lease: RefreshLease, _ error: any Error) {
        manager.records.keepUncommitted(next, lease: lease, for: key)
        manager.logger.error("refreshed tokens could not be stored; kept in memory until they can be", metadata: ["error": "\(error)"])
    }

    /// Records a failed attempt for the background work's hold-back, in the store's due time too
    /// (while `lease` is still the latest), so no manager sharing the store retries sooner; returns `reason`.
    private func holdBack(_ reason: String, lease: RefreshLease) async -> String {
        let now = clock.now
        let notBefore = manager.records.noteFailure(key)
        await postponeDue(lease, until: notBefore)
        manager.records.schedule.changed()
        manager.logger.notice("refresh failed; login kept", metadata: ["retryInSeconds": "\(Int(notBefore.timeIntervalSince(now)))"])
        return reason
    }

    /// Moves the login's due time on to `date`. A failure leaves the login due as it was: claimed
    /// again at the next look once its lease is free.
    private func postponeDue(_ lease: RefreshLease, until date: Date) async {
        do {
            try await store.postponeRefresh(lease, until: date)
            manager.records.noteRefreshDue(date, for: key)
        } catch {
            manager.logger.notice("a refresh's hold-back could not be stored", metadata: ["error": "\(error)"])
        }
    }

    /// The retry after a lost answer failed too: the provider may hold a refresh token this login
    /// never got, and no request could tell which token is current. The login ends as a logout
    /// ends it (the wipe with its revocation queued in the same step, which also ends its lease).
    private func endInDoubt(_ session: LoginSession) async throws -> RefreshRound {
        manager.logger.warning("a refresh answer was lost twice and the provider may have rotated the refresh token; the login ends")
        let revocation = try await manager.logins.wipe(key, event: .reauthRequired, revoking: session)
        manager.records.setEndedInDoubt(key, true)
        return .done(.reauthRequired(.rotationInDoubt), revocation: revocation)
    }

    /// Releases `lease`. A failure only makes the others wait until it runs out, and counts the
    /// answer as lost, which errs on the safe side.
    static func giveBack(_ lease: RefreshLease, answerLost: Bool, store: any LoginLeases, logger: Logger) async {
        do {
            try await store.release(lease, answerLost: answerLost)
        } catch {
            logger.warning("a refresh lease could not be released; it runs out by itself", metadata: ["error": "\(error)"])
        }
    }
}

/// What step 1 decided.
enum RefreshPlan: Sendable {
    case answer(AutoLoginResult)
    case request(LoginSession, refreshToken: SecureBytes)
}

/// What one round under a lease came to.
enum RefreshRound: Sendable {
    /// The answer, and tokens to revoke once the lease and the lock are given back.
    case done(AutoLoginResult, revocation: PendingRevocation? = nil)
    /// The login changed while the request was out: `current` is what the store holds now.
    case changed(current: LoginSession?, revocation: PendingRevocation? = nil)
    /// The lease was overtaken before the request went out; `session` is the login step 1 read.
    case overtaken(LoginSession)

    /// The `outcome` dimension of `sortedvault_refreshes_total`.
    var outcome: String {
        switch self {
        case .done(let result, _): result.outcome
        case .changed, .overtaken: "superseded"
        }
    }
}

/// A refresh lease held for the scope of `withRefreshLease`, and what is to become of it at the
/// scope's end.
struct HeldLease: Sendable {
    enum Ending: Sendable {
        /// Given back: the next claim starts afresh.
        case giveBack
        /// Given back with the request's answer counted as lost: the next claim is the one retry
        /// with the same refresh token.
        case answerLost
        /// Not given back: a write under it ended it (a commit, a wipe), another manager overtook
        /// it, or refreshed tokens the store could not take are kept under it.
        case spent
    }

    let lease: RefreshLease
    var ending = Ending.giveBack
}
