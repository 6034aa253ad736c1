import FoundationEssentials

import VaultCore
import VaultCrypto

/// What restoring one login from a backup did.
public enum LoginRestoreOutcome: String, Sendable, CaseIterable {
    /// The login was stored (there was none, or the caller asked to replace it).
    case restored
    /// The same tokens are stored already: a backup restored twice changes nothing.
    case same
    /// Another login is stored under the name (newer tokens, most likely: a refresh since the
    /// backup rotated them) and was kept.
    case kept
    /// The backup's login has ended (its lifetime or refresh token ran out): nothing was stored.
    case ended
}

extension SessionManager {
    /// Puts back a login from a backup (docs/backup.md) as the one write of a new login, under the
    /// login's lock: watchers see it `saved`, its proactive refresh is scheduled. A stored login
    /// with other tokens is kept unless `replace`: its refresh token is likely newer, and a rotated
    /// one from the backup would no longer work.
    public func restore(_ session: LoginSession, for key: ItemKey, replace: Bool) async throws -> LoginRestoreOutcome {
        try await withKeyLock(key) {
            let now = clock.now
            if session.endReason(at: now) != nil { return .ended }
            if let stored = try await storedSession(key) {
                if stored.accessToken == session.accessToken && stored.refreshToken == session.refreshToken { return .same }
                if !replace { return .kept }
            }
            var restored = session
            restored.loginID = SecureRandomID.make()  // a new login: not one a lease still out could take for its own
            uncommitted[key] = nil
            try await commit(restored, for: key)
            book.succeeded(key)
            track(restored, for: key)
            publish(.saved, key)
            return .restored
        }
    }
}
