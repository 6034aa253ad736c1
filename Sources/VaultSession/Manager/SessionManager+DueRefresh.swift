import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// Proactive refresh, shared by every manager over one store: the store knows when each login is
/// due (its due time is written with it, ``commit(_:for:holding:)``), and the background work
/// claims due logins together with their refresh lease (``DueRefreshes``), so each is refreshed by
/// one manager of all, whichever wrote it, and no manager needs to have read a login first. The
/// refresh itself is the one refresh flight, started with the claimed lease instead of claiming one.
extension SessionManager {
    /// How many due logins one claim takes: they are refreshed at once, so each provider request
    /// starts right after the claim, well within the lease.
    static var dueClaimBatch: Int { 8 }
    /// Claims in one round at most; what is left waits for the next round.
    static var dueClaimRounds: Int { 64 }

    /// Claims due logins a batch at a time and refreshes each batch at once. Returns false when the
    /// store is locked (the round stops; it resumes after unlock).
    func refreshDueLogins(validFor lead: TimeInterval) async throws -> Bool {
        var unlocked = true
        // A login that comes back in the same round failed without moving its due time (the store
        // could not be read): it waits for the next round rather than being asked about again now.
        var seen: Set<ItemKey> = []
        for _ in 0..<Self.dueClaimRounds where unlocked {
            let claimed = try await store.claimDueRefreshes(limit: Self.dueClaimBatch, owner: leaseOwner,
                                                           duration: configuration.refreshLease)
            let again = claimed.filter { seen.contains($0.lease.item) }
            for due in again { await RefreshFlight.giveBack(due.lease, answerLost: false, store: store, logger: logger) }
            let fresh = claimed.filter { !seen.contains($0.lease.item) }
            seen.formUnion(fresh.map(\.lease.item))
            unlocked = await withTaskGroup(of: Bool.self) { group in
                for due in fresh {
                    group.addTask { await self.refreshClaimed(due, validFor: lead) }
                }
                var unlocked = true
                for await refreshed in group where !refreshed { unlocked = false }
                return unlocked
            }
            if claimed.count < Self.dueClaimBatch || !again.isEmpty { break }
        }
        // The store knows every due time this manager wrote so far; those written while it answers
        // are kept, and what other managers write is found by the next look (``LoginBook/sharedDuePoll``).
        let written = book.refreshDueWritten
        book.refreshDueWritten = [:]
        do {
            book.storeRefreshDueAt = try await store.earliestRefreshDue()
        } catch {
            book.refreshDueWritten.merge(written) { newer, _ in newer }
            throw error
        }
        return unlocked
    }

    /// Refreshes one claimed login under its lease. Returns false when the store is locked.
    private func refreshClaimed(_ due: DueRefresh, validFor lead: TimeInterval) async -> Bool {
        guard let key = SessionItems.login(of: due.lease.item) else {
            // Only logins are written with a due time; anything else is given back untouched.
            await RefreshFlight.giveBack(due.lease, answerLost: false, store: store, logger: logger)
            return true
        }
        do {
            let result = try await sharedFlight(key, asker: .due, validFor: lead, claimed: due)
            logger.debug("proactive session work", metadata: ["service": "\(logName(key.service))", "outcome": "\(result.outcome)"])
        } catch let error as VaultError where error.code == .locked {
            return false
        } catch {
            logger.warning("proactive refresh failed", metadata: ["error": "\(error)"])
            book.failed(key, at: clock.now, retry: configuration.retry, random: random())
        }
        return true
    }
}
