import FoundationEssentials
import VaultCore

/// What ``SessionManager/logoutAll(service:)`` did.
public struct BulkLogoutResult: Sendable, Equatable {
    /// Logins wiped.
    public var loggedOut: Int
    /// Of their revocations, those the provider confirmed.
    public var revoked: Int
    /// Those left in the outbox for the background work (the provider could not be reached).
    public var revocationsQueued: Int

    public init(loggedOut: Int = 0, revoked: Int = 0, revocationsQueued: Int = 0) {
        self.loggedOut = loggedOut
        self.revoked = revoked
        self.revocationsQueued = revocationsQueued
    }
}

/// The background work left to do, as an operator sees it (`sortedvault fleet status`).
public struct FleetStatus: Sendable, Equatable {
    public var revocations: RevocationBacklog
    /// The attempts after which a queued revocation counts as stuck.
    public var stuckAfter: Int
    /// Logins whose last refresh answer is unknown (``LoginLeases/loginsInDoubt()``).
    public var loginsInDoubt: Int
    /// The data keys rows are sealed under, when the store has such keys; nil otherwise.
    public var dataKeys: [DataKeyUse]?

    public init(revocations: RevocationBacklog, stuckAfter: Int, loginsInDoubt: Int, dataKeys: [DataKeyUse]?) {
        self.revocations = revocations
        self.stuckAfter = stuckAfter
        self.loginsInDoubt = loginsInDoubt
        self.dataKeys = dataKeys
    }
}

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
