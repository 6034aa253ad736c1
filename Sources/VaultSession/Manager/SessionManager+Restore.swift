import FoundationEssentials

import VaultCore
import VaultCrypto

extension SessionManager {
    /// Puts back a login from a backup (docs/backup.md) as the one write of a new login, under the
    /// login's lock: watchers see it `saved`, its proactive refresh is scheduled. A stored login
    /// with other tokens is kept unless `replace`: its refresh token is likely newer, and a rotated
    /// one from the backup would no longer work.
    public func restore(_ session: LoginSession, for key: ItemKey, replace: Bool) async throws -> LoginRestoreOutcome {
        try await withKeyLock(key) {
            let now = clock.now
            if session.endReason(at: now) != nil { return .ended }
            if let stored = try await logins.read(key) {
                if stored.accessToken == session.accessToken && stored.refreshToken == session.refreshToken { return .same }
                if !replace { return .kept }
            }
            var restored = session
            restored.loginID = SecureRandomID.make()  // a new login: not one a lease still out could take for its own
            try await logins.writeNew(restored, for: key)
            return .restored
        }
    }
}
