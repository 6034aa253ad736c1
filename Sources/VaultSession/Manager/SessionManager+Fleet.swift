import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

extension SessionManager {
    /// Logs out every login of `service`, each through the logout's own steps: the wipe with its
    /// revocation queued in one step, then the revocations sent. After the provider's first "not
    /// reachable" the rest are not tried now: they stay queued, for the background work of every
    /// manager sharing the store, instead of each costing a request deadline here
    /// (``RevocationSender/deliverUntilUnreachable(_:)``).
    public func logoutAll(service: String) async throws -> BulkLogoutResult {
        try ItemKey.checkName(service, what: "service")
        let items = try await store.list(service: SessionItems.sessionPrefix + service)
        var result = BulkLogoutResult()
        var pending: [PendingRevocation] = []
        for item in items {
            guard let key = SessionItems.login(of: item.key) else { continue }
            let (revocation, wasLoggedIn, _) = try await endLogin(key)
            if wasLoggedIn { result.loggedOut += 1 }
            if let revocation { pending.append(revocation) }
        }
        (result.revoked, result.revocationsQueued) = try await revocations.deliverUntilUnreachable(pending)
        return result
    }

    /// Rewraps the store's rows under a new data key (``DataKeyRewrap``); nil when the store has no
    /// data keys (a one-host vault, sealed under its master key).
    public func rewrapDataKeys(batchSize: Int) async throws -> DataKeyRewrap? {
        guard let keyed = store as? any DataKeyReporting else { return nil }
        return try await keyed.rewrapDataKeys(batchSize: batchSize)
    }

    /// The revocation backlog, the logins in doubt and the data keys in use, from the store all
    /// managers share (or this manager's own).
    public func fleetStatus() async throws -> FleetStatus {
        FleetStatus(revocations: try await revocations.backlog(), stuckAfter: configuration.revocationStuckAfter,
                    loginsInDoubt: try await store.loginsInDoubt(),
                    dataKeys: try await (store as? any DataKeyReporting)?.dataKeysInUse())
    }

    /// The revocation backlog of the store's outbox, with stuck meaning
    /// ``SessionConfiguration/revocationStuckAfter`` failed attempts or more.
    public func revocationBacklog() async throws -> RevocationBacklog {
        try await revocations.backlog()
    }
}
