import FoundationEssentials
import VaultCore

/// A manager's reads and writes of login records: each login is one sealed item in the store,
/// expiring when the login ends and carrying the time its proactive refresh is due. Every read
/// first writes what a failed write left in memory (``LoginRecords/Uncommitted``); every write and
/// wipe is noted in the ``LoginRecords``. Callers that change a login hold its key lock.
struct StoredLogins: Sendable {
    let store: any DueRefreshes
    let records: LoginRecords
    let revocations: RevocationSender
    /// The refresh under way per login (``RefreshFlight``): a wipe makes later callers start afresh.
    let flights: SingleFlight<ItemKey, Result<AutoLoginResult, any Error>>
    let metrics: SessionMetrics

    /// The stored login, after writing any refreshed tokens a failed write left in memory.
    func read(_ key: ItemKey) async throws -> LoginSession? {
        if let pending = records.uncommitted(key) {
            let written = try await write(pending.session, for: key, holding: pending.lease)
            records.dropUncommitted(key, written: pending)
            if !written {
                metrics.fencedCommit()
                // Sent by the background work: this read may be under the login's lock.
                _ = try await revocations.discard(pending.session, for: key, sendNow: false)
            }
        }
        do {
            let item = try await store.retrieve(try SessionItems.item(for: key))
            return try LoginSession(sealedRecord: item.secret)
        } catch let error as VaultError where error.code == .notFound {
            return nil
        }
    }

    /// Writes the login as one item, expiring when the login ends and due for its proactive refresh
    /// (``LoginRecords/refreshDue(_:)``): a sign-in as it is, a refresh only while `lease` is still
    /// the login's latest. Returns false when the lease was overtaken (nothing was written).
    @discardableResult
    func write(_ session: LoginSession, for key: ItemKey, holding lease: RefreshLease? = nil) async throws -> Bool {
        let due = records.refreshDue(session)
        let options = try StoreOptions(label: "sortedvault login", expiresAt: session.endsAt, refreshDueAt: due)
        let item = try SessionItems.item(for: key)
        if let lease {
            guard try await store.store(session.sealedRecord(), for: item, options: options, holding: lease) else { return false }
        } else {
            try await store.store(session.sealedRecord(), for: item, options: options)
        }
        records.noteRefreshDue(due, for: key)
        return true
    }

    /// The write of a new login (a sign-in, a restore), under its key lock: it replaces whatever was
    /// stored or waiting to be written, starts without a hold-back, and watchers see it `saved`.
    func writeNew(_ session: LoginSession, for key: ItemKey) async throws {
        records.dropUncommitted(key)
        try await write(session, for: key)
        records.saved(session, for: key)
    }

    /// Deletes the login's item and tells the watchers. With `revoking`, the revocation of that
    /// session's tokens is queued in the outbox in the same step as the delete, and returned for
    /// the caller to send once it no longer holds the login's lock.
    @discardableResult
    func wipe(_ key: ItemKey, event: SessionEvent.Kind, revoking session: LoginSession? = nil) async throws -> PendingRevocation? {
        records.dropUncommitted(key)
        // A refresh still out for this login will find it gone and discard its answer; callers
        // from now on start afresh instead of waiting for it.
        flights.forget(key)
        var pending: PendingRevocation?
        if let session {
            pending = try await revocations.enqueue(of: session, for: key, wiping: true, sendNow: true)
        }
        if pending == nil {
            do {
                try await store.delete(try SessionItems.item(for: key))
            } catch let error as VaultError where error.code == .notFound {}
        }
        records.forget(key, event: event)
        return pending
    }
}
