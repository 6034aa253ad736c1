import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A refresh's dealings with the manager (``RefreshFlight``): the flights table that makes it one
/// refresh per login, however many callers ask, and step 1, which reads the login and decides what to do.
extension SessionManager {
    /// Joins the refresh already under way for `key`, or starts one; with `claimed`, the lease a
    /// claim of due logins took is the one step 2 uses.
    func sharedFlight(_ key: ItemKey, asker: RefreshAsker, validFor: TimeInterval, claimed: DueRefresh? = nil) async throws -> AutoLoginResult {
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
        guard let session = try await logins.read(key) else { return .answer(.reauthRequired(records.gone(key))) }
        records.setEndedInDoubt(key, false)  // signed in again
        if let reason = session.endReason(at: clock.now) {
            try await logins.wipe(key, event: .expired)
            return .answer(.reauthRequired(reason))
        }
        records.track(session, for: key)
        if asker != .forced && asker != .due && session.isValid(at: clock.now, forAtLeast: validFor) {
            return .answer(.valid(AccessGrant(session)))
        }
        guard let refreshToken = session.refreshToken else { return .answer(.reauthRequired(.noRefreshToken)) }
        if let notBefore = records.heldBackUntil(key, asker: asker), notBefore > clock.now {
            return .answer(.offline(validGrant(session), reason: "the provider failed moments ago; the next attempt may be made at \(notBefore)"))
        }
        return .request(session, refreshToken: refreshToken)
    }

    /// The cached grant while its access token is still valid at all.
    func validGrant(_ session: LoginSession) -> AccessGrant? {
        session.accessTokenIsValid(at: clock.now) ? AccessGrant(session) : nil
    }
}
