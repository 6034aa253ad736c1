import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A refresh's dealings with the manager's records (``RefreshFlight``): the flights table that
/// makes it one refresh per login, however many callers ask; step 1, which reads the login and
/// decides what to do; and what step 4 records in the book.
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
    func keepUncommitted(_ next: LoginSession, _ lease: RefreshLease, for key: ItemKey, _ error: any Error) {
        uncommitted[key] = (next, lease)
        logger.error("refreshed tokens could not be stored; kept in memory until they can be", metadata: ["error": "\(error)"])
        schedule.changed()
    }

    /// Step 4's records, for the flight: new tokens written, the hold-back cleared, watchers told.
    func refreshed(_ next: LoginSession, for key: ItemKey) {
        book.succeeded(key)
        track(next, for: key)
        publish(.refreshed, key)
    }

    /// Step 4's record of a login ended in doubt: its callers hear `rotationInDoubt`, not `noSession`.
    func endedInDoubt(_ key: ItemKey) {
        book.endedInDoubt.insert(key)
    }

    func failures(of key: ItemKey) -> Int { book.failures(of: key) }

    /// The cached grant while its access token is still valid at all.
    nonisolated func validGrant(_ session: LoginSession) -> AccessGrant? {
        session.accessTokenIsValid(at: clock.now) ? AccessGrant(session) : nil
    }
}
