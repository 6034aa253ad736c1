import FoundationEssentials
import VaultCore

/// One round of the background work (``SessionManager/runDueWork()``), at the clock's "now":
/// refreshed tokens a failed write left in memory are written, logins that ended are wiped, due
/// logins are refreshed ahead of time, and queued revocations are retried. Each step answers false
/// when the store is locked, which ends the round (it resumes after unlock).
///
/// Proactive refresh is shared by every manager over one store: the store knows when each login is
/// due (its due time is written with it, ``StoredLogins/write(_:for:holding:)``), and the round
/// claims due logins together with their refresh lease (``DueRefreshes``), so each is refreshed by
/// one manager of all, whichever wrote it, and no manager needs to have read a login first. The
/// refresh itself is the one refresh flight, started with the claimed lease instead of claiming one.
struct DueWork: Sendable {
    let manager: SessionManager
    let now: Date

    /// How long a login refreshed ahead of time must stay valid: the whole lead, jitter included,
    /// so it is not due again at once.
    private var lead: TimeInterval {
        let configuration = manager.configuration
        return configuration.minValid + configuration.refreshAhead + configuration.refreshJitter
    }

    func run() async {
        guard await writeUncommitted(), await endEndedLogins(), await claimAndRefreshDue(),
              await manager.revocations.retryDue(at: now) else { return }
        await manager.recordStoreMetrics()
    }

    private func writeUncommitted() async -> Bool {
        for key in manager.records.uncommittedKeys {
            do {
                // Reading the login writes what a failed write left in memory first.
                try await manager.keyLocks.withLock(key) { _ = try await manager.logins.read(key) }
            } catch let error as VaultError where error.code == .locked {
                return false
            } catch {
                manager.logger.notice("refreshed tokens still cannot be stored; trying again", metadata: ["error": "\(error)"])
            }
        }
        return true
    }

    private func endEndedLogins() async -> Bool {
        for key in manager.records.endedLogins(at: now) {
            guard await refresh(key, asker: .background, failure: "proactive session work failed") else { return false }
        }
        return true
    }

    /// One login's work through the one refresh flight; a failure holds the login back, so the
    /// round does not spin on one that keeps failing. False when the store is locked.
    private func refresh(_ key: ItemKey, asker: RefreshAsker, claimed: DueRefresh? = nil, failure: String) async -> Bool {
        do {
            let result = try await manager.sharedFlight(key, asker: asker, validFor: lead, claimed: claimed)
            manager.logger.debug("proactive session work", metadata: ["service": "\(manager.logName(key.service))", "outcome": "\(result.outcome)"])
        } catch let error as VaultError where error.code == .locked {
            return false
        } catch {
            manager.logger.warning("\(failure)", metadata: ["error": "\(error)"])
            manager.records.noteFailure(key)
        }
        return true
    }

    private func claimAndRefreshDue() async -> Bool {
        guard manager.configuration.proactiveRefresh else { return true }
        do {
            return try await refreshDueLogins()
        } catch let error as VaultError where error.code == .locked {
            return false
        } catch {
            manager.logger.warning("due refreshes could not be claimed", metadata: ["error": "\(error)"])
            return true
        }
    }

    /// How many due logins one claim takes: they are refreshed at once, so each provider request
    /// starts right after the claim, well within the lease.
    static var claimBatch: Int { 8 }
    /// Claims in one round at most; what is left waits for the next round.
    static var claimRounds: Int { 64 }

    /// Claims due logins a batch at a time and refreshes each batch at once. Returns false when the
    /// store is locked (the round stops; it resumes after unlock).
    private func refreshDueLogins() async throws -> Bool {
        var unlocked = true
        // A login that comes back in the same round failed without moving its due time (the store
        // could not be read): it waits for the next round rather than being asked about again now.
        var seen: Set<ItemKey> = []
        for _ in 0..<Self.claimRounds where unlocked {
            let claimed = try await manager.store.claimDueRefreshes(limit: Self.claimBatch, owner: manager.leaseOwner,
                                                                    duration: manager.configuration.refreshLease)
            let again = claimed.filter { seen.contains($0.lease.item) }
            for due in again { await RefreshFlight.giveBack(due.lease, answerLost: false, store: manager.store, logger: manager.logger) }
            let fresh = claimed.filter { !seen.contains($0.lease.item) }
            seen.formUnion(fresh.map(\.lease.item))
            unlocked = await withTaskGroup(of: Bool.self) { group in
                for due in fresh {
                    group.addTask { await self.refreshClaimed(due) }
                }
                var unlocked = true
                for await refreshed in group where !refreshed { unlocked = false }
                return unlocked
            }
            if claimed.count < Self.claimBatch || !again.isEmpty { break }
        }
        try await manager.records.lookAgainForDue { try await manager.store.earliestRefreshDue() }
        return unlocked
    }

    /// Refreshes one claimed login under its lease. Returns false when the store is locked.
    private func refreshClaimed(_ due: DueRefresh) async -> Bool {
        guard let key = SessionItems.login(of: due.lease.item) else {
            // Only logins are written with a due time; anything else is given back untouched.
            await RefreshFlight.giveBack(due.lease, answerLost: false, store: manager.store, logger: manager.logger)
            return true
        }
        return await refresh(key, asker: .due, claimed: due, failure: "proactive refresh failed")
    }
}
