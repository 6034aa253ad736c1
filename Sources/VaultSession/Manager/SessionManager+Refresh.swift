import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Steps 1 and 4 of a refresh (``RefreshFlight``): the manager reads the login and decides what
/// to do, and applies the provider's answer, each under the login's key lock; and the flights
/// table that makes it one refresh per login, however many callers ask.
extension SessionManager {
    /// Joins the refresh already under way for `key`, or starts one; with `claimed`, the lease a
    /// claim of due logins took is the one step 2 uses.
    nonisolated func sharedFlight(_ key: ItemKey, asker: RefreshAsker, validFor: TimeInterval, claimed: DueRefresh? = nil) async throws -> AutoLoginResult {
        let flight = RefreshFlight(manager: self, key: key, asker: asker, validFor: validFor)
        let (task, joined) = flights.task(for: key) {
            do { return .success(try await flight.run(claimed: claimed)) } catch { return .failure(error) }
        }
        if joined, let claimed {
            // That flight is this manager's refresh of the login already; the claimed lease would
            // only keep it waiting.
            await RefreshFlight.giveBack(claimed.lease, answerLost: false, store: store, logger: logger)
        }
        return try await task.value.get()
    }

    /// Step 1, under the key lock: answer from the store, or say which request to make.
    func plan(_ key: ItemKey, asker: RefreshAsker, validFor: TimeInterval) async throws -> RefreshPlan {
        guard let session = try await storedSession(key) else {
            if let known = book.tracked[key], let endsAt = known.endsAt, clock.now >= endsAt {
                // The store already purged it at its expiry: tell the watchers why it is gone.
                forget(key)
                publish(.expired, key)
                return .answer(.reauthRequired(known.endReason))
            }
            forget(key)
            return .answer(.reauthRequired(book.endedInDoubt.contains(key) ? .rotationInDoubt : .noSession))
        }
        book.endedInDoubt.remove(key)  // signed in again
        if let reason = session.endReason(at: clock.now) {
            try await wipe(key, event: .expired)
            return .answer(.reauthRequired(reason))
        }
        track(session, for: key)
        if asker != .forced && asker != .due && session.isValid(at: clock.now, forAtLeast: validFor) {
            return .answer(.valid(AccessGrant(session)))
        }
        guard let refreshToken = session.refreshToken else { return .answer(.reauthRequired(.noRefreshToken)) }
        if let notBefore = book.heldBackUntil(key, asker: asker, clientRetryFloor: configuration.clientRetryFloor), notBefore > clock.now {
            return .answer(.offline(validGrant(session), reason: "the provider failed moments ago; the next attempt may be made at \(notBefore)"))
        }
        return .request(session, refreshToken: refreshToken)
    }

    /// Keeps refreshed tokens the store could not take, to be written by the next read of the login
    /// or by the background work (``runDueWork()``), whichever comes first, while the lease lasts.
    private func keepUncommitted(_ next: LoginSession, _ lease: RefreshLease, for key: ItemKey, _ error: any Error) {
        uncommitted[key] = (next, lease)
        logger.error("refreshed tokens could not be stored; kept in memory until they can be", metadata: ["error": "\(error)"])
        schedule.changed()
    }

    /// Step 4, under the key lock: applies the provider's answer to the login it was made for.
    /// `inDoubt`: the answer to an earlier request with the same refresh token was lost.
    func apply(_ answer: RefreshAnswer, to session: LoginSession, usedToken: SecureBytes, under held: inout HeldLease,
                       inDoubt: Bool, for key: ItemKey) async throws -> RefreshRound {
        let current: LoginSession?
        do {
            current = try await storedSession(key)
        } catch {
            // The store went away while the provider answered. New tokens may mean the refresh
            // token was rotated: keep them, still under this lease (which fences the write if the
            // login changes meanwhile), and write them once the store is back.
            switch answer {
            case .tokens(let response):
                keepUncommitted(session.refreshed(with: response, at: clock.now), held.lease, for: key, error)
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
            guard unchanged else { return .changed(current: current, revocation: try await revocations.discard(next, for: key, sendNow: true)) }
            return try await applyTokens(next, under: &held, for: key)
        case .invalidGrant, .lost:
            // Another refresh, a new sign-in or a logout may have won: only the login the request
            // was made for is ended or held back.
            guard unchanged, let current else { return .changed(current: current) }
            return try await applyFailure(answer, to: current, under: &held, inDoubt: inDoubt, for: key)
        case .transient(let reason):
            guard let current else { return .done(.reauthRequired(.noSession)) }
            return .done(.offline(validGrant(current), reason: await holdBack(key, reason, lease: held.lease)))
        case .rejected(let error, let description):
            guard current != nil else { return .done(.reauthRequired(.noSession)) }
            // Not retried by the background work before the hold-back a failure earns.
            let failures = book.failures(of: key) + 1
            await postponeDue(held.lease, for: key, until: clock.now.addingTimeInterval(
                configuration.retry.delay(afterFailures: failures, random: random())))
            throw VaultError(.providerRejected,
                "the provider refused to refresh this login (\(error)\(description.map { ": \($0)" } ?? "")); check the provider settings saved with it (client id and secret, API key, endpoints), then sign in again")
        }
    }

    /// Step 4 for a rejected refresh token or a lost answer, to the login the request was made for.
    private func applyFailure(_ answer: RefreshAnswer, to current: LoginSession, under held: inout HeldLease,
                              inDoubt: Bool, for key: ItemKey) async throws -> RefreshRound {
        if inDoubt {
            // Should the wipe fail, the lease running out still tells the next claim.
            held.ending = .answerLost
            let round = try await endInDoubt(current, for: key)
            held.ending = .spent
            return round
        }
        guard case .lost(let reason) = answer else {
            try await wipe(key, event: .reauthRequired)
            held.ending = .spent
            return .done(.reauthRequired(.refreshRejected))
        }
        held.ending = .answerLost
        return .done(.offline(validGrant(current), reason: await holdBack(key, reason, lease: held.lease)))
    }

    /// Step 4 for new tokens, made for the login still stored: written while `held` is still the
    /// login's latest lease.
    private func applyTokens(_ next: LoginSession, under held: inout HeldLease, for key: ItemKey) async throws -> RefreshRound {
        let written: Bool
        do {
            written = try await commit(next, for: key, holding: held.lease)
        } catch {
            // The provider may have rotated the refresh token: keep the new one in memory and
            // write it, still under this lease, before anything else touches this login.
            keepUncommitted(next, held.lease, for: key, error)
            held.ending = .spent
            throw error
        }
        // Written, the write ended the lease; not written, it is another manager's now.
        held.ending = .spent
        guard written else {
            metrics.fencedCommit()
            // The lease ran out and another manager took the login over (or a sign-in or a
            // logout replaced it): this answer came too late, as one after a logout does.
            return .changed(current: try await storedSession(key), revocation: try await revocations.discard(next, for: key, sendNow: true))
        }
        book.succeeded(key)
        track(next, for: key)
        publish(.refreshed, key)
        return .done(.refreshed(AccessGrant(next)))
    }

    /// Records a failed attempt for the background work's hold-back, in the store's due time too
    /// (while `lease` is still the latest), so no manager sharing the store retries sooner; returns `reason`.
    private func holdBack(_ key: ItemKey, _ reason: String, lease: RefreshLease) async -> String {
        let now = clock.now
        let notBefore = book.failed(key, at: now, retry: configuration.retry, random: random()).notBefore
        await postponeDue(lease, for: key, until: notBefore)
        schedule.changed()
        logger.notice("refresh failed; login kept", metadata: ["retryInSeconds": "\(Int(notBefore.timeIntervalSince(now)))"])
        return reason
    }

    /// Moves the login's due time on to `date`. A failure leaves the login due as it was: claimed
    /// again at the next look once its lease is free.
    private func postponeDue(_ lease: RefreshLease, for key: ItemKey, until date: Date) async {
        do {
            try await store.postponeRefresh(lease, until: date)
            noteRefreshDue(date, for: key)
        } catch {
            logger.notice("a refresh's hold-back could not be stored", metadata: ["error": "\(error)"])
        }
    }

    /// The retry after a lost answer failed too: the provider may hold a refresh token this login
    /// never got, and no request could tell which token is current. The login ends as a logout
    /// ends it (the wipe with its revocation queued in the same step, which also ends its lease).
    private func endInDoubt(_ session: LoginSession, for key: ItemKey) async throws -> RefreshRound {
        logger.warning("a refresh answer was lost twice and the provider may have rotated the refresh token; the login ends")
        let revocation = try await wipe(key, event: .reauthRequired, revoking: session)
        book.endedInDoubt.insert(key)
        return .done(.reauthRequired(.rotationInDoubt), revocation: revocation)
    }

    /// The cached grant while its access token is still valid at all.
    nonisolated func validGrant(_ session: LoginSession) -> AccessGrant? {
        session.accessTokenIsValid(at: clock.now) ? AccessGrant(session) : nil
    }
}
