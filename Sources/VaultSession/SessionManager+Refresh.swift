import Foundation
import VaultCore
import VaultCrypto

/// The refresh flight: one provider request per login at a time, shared by every caller.
///
/// A refresh runs in three steps, and the login's key lock is held only around the store work,
/// never across the network:
/// 1. under the lock, read the login and decide (valid, ended, held back, or ask the provider);
/// 2. without the lock, ask the provider (bounded by the transport's wall-clock deadline);
/// 3. under the lock again, re-read the login and apply the answer only if it is still the login
///    the request was made for (same sign-in, same refresh token). A logout, a new sign-in or
///    another refresh that came first wins: the answer is discarded, and tokens it brought are
///    never stored and are revoked (`discard(_:of:for:)` below).
///
/// So a `Logout` never waits for a slow provider, and a refresh that returns after a logout cannot
/// bring the login back.
extension SessionManager {
    /// Who asks: the background work waits out the whole hold-back after failures; a client asking
    /// is held back only by ``Configuration/clientRetryFloor``; a forced refresh is never held back.
    enum Asker: Sendable {
        case client, background, forced
    }

    /// Joins the refresh already under way for `key`, or starts one.
    func sharedFlight(_ key: ItemKey, asker: Asker, validFor: TimeInterval) async throws -> AutoLoginResult {
        if let running = flights[key] {
            return try await running.task.value.get()
        }
        let id = nextFlightID
        nextFlightID &+= 1
        let task = Task { () -> Result<AutoLoginResult, any Error> in
            let result: Result<AutoLoginResult, any Error>
            do {
                result = .success(try await self.refreshFlight(key, asker: asker, validFor: validFor))
            } catch {
                result = .failure(error)
            }
            self.endFlight(key, id: id)
            return result
        }
        flights[key] = Flight(id: id, task: task)
        return try await task.value.get()
    }

    /// Forgets the flight, unless a logout already let a newer one take its place.
    private func endFlight(_ key: ItemKey, id: UInt64) {
        if flights[key]?.id == id { flights[key] = nil }
    }

    /// What step 1 decided.
    private enum Plan {
        case answer(AutoLoginResult)
        case request(LoginSession, refreshToken: SecureBytes)
    }

    /// What step 3 made of the provider's answer.
    private enum Applied {
        case answer(AutoLoginResult)
        /// The login changed while the request was out: `current` is what the store holds now.
        case superseded(current: LoginSession?, revocation: QueuedRevocation?)
    }

    /// The one place a refresh request is made.
    func refreshFlight(_ key: ItemKey, asker: Asker, validFor: TimeInterval) async throws -> AutoLoginResult {
        // One more round when the login changed under the request (a refresh token rotated
        // elsewhere, a new sign-in that already needs a refresh); never more.
        for round in 0..<2 {
            let session: LoginSession, usedToken: SecureBytes
            switch try await withKeyLock(key, { try await planRefresh(key, asker: asker, validFor: validFor) }) {
            case .answer(let result): return result
            case .request(let stored, let refreshToken): (session, usedToken) = (stored, refreshToken)
            }
            let answer = await verified(await oauth.refresh(session, refreshToken: usedToken), for: session)
            let applied = try await withKeyLock(key) {
                try await apply(answer, to: session, usedToken: usedToken, for: key)
            }
            switch applied {
            case .answer(let result):
                return result
            case .superseded(let current, let revocation):
                if let revocation { _ = try? await revoke(revocation) }
                guard let current else { return .reauthRequired(.noSession) }
                if current.isValid(at: clock.now, forAtLeast: validFor) { return .valid(AccessGrant(current)) }
                if round == 1 {
                    return .offline(validGrant(current), reason: "the login changed while it was being refreshed; ask again")
                }
            }
        }
        return .reauthRequired(.noSession)  // not reached: the second round always answers
    }

    /// Step 1, under the key lock: answer from the store, or say which request to make.
    private func planRefresh(_ key: ItemKey, asker: Asker, validFor: TimeInterval) async throws -> Plan {
        guard let session = try await storedSession(key) else {
            if let known = tracked[key], let endsAt = known.endsAt, clock.now >= endsAt {
                // The store already purged it at its expiry: tell the watchers why it is gone.
                forget(key)
                publish(.expired, key)
                return .answer(.reauthRequired(known.endReason))
            }
            forget(key)
            return .answer(.reauthRequired(.noSession))
        }
        if let reason = session.endReason(at: clock.now) {
            try await wipe(key, event: .expired)
            return .answer(.reauthRequired(reason))
        }
        track(session, for: key)
        if asker != .forced && session.isValid(at: clock.now, forAtLeast: validFor) {
            return .answer(.valid(AccessGrant(session)))
        }
        guard let refreshToken = session.refreshToken else { return .answer(.reauthRequired(.noRefreshToken)) }
        if let notBefore = heldBackUntil(key, asker: asker), notBefore > clock.now {
            return .answer(.offline(validGrant(session), reason: "the provider failed moments ago; the next attempt may be made at \(notBefore)"))
        }
        return .request(session, refreshToken: refreshToken)
    }

    /// When `asker` may next reach the provider for `key` after failures, or nil when it may now.
    private func heldBackUntil(_ key: ItemKey, asker: Asker) -> Date? {
        guard let retry = retries[key] else { return nil }
        switch asker {
        case .forced: return nil
        case .background: return retry.notBefore
        case .client: return min(retry.notBefore, retry.lastAttemptAt.addingTimeInterval(configuration.clientRetryFloor))
        }
    }

    /// Step 3, under the key lock: applies the provider's answer to the login it was made for.
    private func apply(_ answer: RefreshAnswer, to session: LoginSession, usedToken: SecureBytes,
                       for key: ItemKey) async throws -> Applied {
        let current = try await storedSession(key)
        let unchanged = current.map { $0.loginID == session.loginID && ($0.refreshToken.map { $0 == usedToken } ?? false) } ?? false
        switch answer {
        case .tokens(let response):
            let next = session.refreshed(with: response, at: clock.now)
            guard unchanged else {
                return .superseded(current: current, revocation: try await discard(next, of: current, for: key))
            }
            do {
                try await commit(next, for: key)
            } catch {
                // The provider may have rotated the refresh token: keep the new one in
                // memory and write it before anything else touches this login.
                uncommitted[key] = next
                logger.error("refreshed tokens could not be stored; kept in memory until they can be",
                             metadata: ["error": "\(error)"])
                throw error
            }
            retries[key] = nil
            track(next, for: key)
            publish(.refreshed, key)
            return .answer(.refreshed(AccessGrant(next)))
        case .invalidGrant:
            // Another refresh, a new sign-in or a logout may have won: only the login the request
            // was made for is wiped.
            guard unchanged else { return .superseded(current: current, revocation: nil) }
            try await wipe(key, event: .reauthRequired)
            return .answer(.reauthRequired(.refreshRejected))
        case .transient(let reason):
            guard let current else { return .answer(.reauthRequired(.noSession)) }
            let failures = (retries[key]?.failures ?? 0) + 1
            let delay = configuration.retry.delay(afterFailures: failures, random: random())
            retries[key] = RetryState(failures: failures, notBefore: clock.now.addingTimeInterval(delay), lastAttemptAt: clock.now)
            scheduleChanged()
            logger.notice("refresh failed; login kept", metadata: ["retryInSeconds": "\(Int(delay))"])
            return .answer(.offline(validGrant(current), reason: reason))
        case .rejected(let error, let description):
            guard current != nil else { return .answer(.reauthRequired(.noSession)) }
            throw VaultError(.providerRejected,
                "the provider refused to refresh this login (\(error)\(description.map { ": \($0)" } ?? "")); check the provider settings saved with it (client id and secret, API key, endpoints), then sign in again")
        }
    }

    /// Tokens a refresh brought for a login that a logout or a new sign-in has replaced meanwhile:
    /// they are never stored; their revocation is journalled (sent by the caller after the lock,
    /// retried by the background work when the provider is unreachable).
    ///
    /// When the store still holds the same sign-in (its refresh token rotated elsewhere), nothing
    /// is journalled: a revocation record of a live sign-in would make ``resume()`` wipe it.
    private func discard(_ tokens: LoginSession, of current: LoginSession?, for key: ItemKey) async throws -> QueuedRevocation? {
        logger.notice("a refresh answered after its login was logged out or replaced; its tokens are discarded")
        guard current?.loginID != tokens.loginID else { return nil }
        return try await journalRevocation(of: tokens, for: key)
    }

    /// The cached grant while its access token is still valid at all.
    func validGrant(_ session: LoginSession) -> AccessGrant? {
        session.accessTokenIsValid(at: clock.now) ? AccessGrant(session) : nil
    }
}

/// A refresh under way, with the number that tells it from a later one for the same login.
struct Flight {
    let id: UInt64
    let task: Task<Result<AutoLoginResult, any Error>, Never>
}
