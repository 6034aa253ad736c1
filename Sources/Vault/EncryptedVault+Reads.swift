import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// The vault's reads. Each read has one body, which answers from ``ReadView`` — a copy of what the
/// actor last verified (keys, authenticated state and map, newest generation seen) — and one
/// storage read of one snapshot. The `…Now` entries run it on the caller's thread, without the
/// actor; the async entries run the same body, and when it cannot answer from the view, run it
/// again on the actor, under the write turn, after verifying the state afresh.
///
/// ```swift
/// if let item = try vault.retrieveNow(key) { reply(item) } else { reply(try await vault.retrieve(key)) }
/// ```
///
/// The body cannot answer (``Read/stale``) when the state read is not the one verified (another
/// process wrote, or a rollback), when a row disagrees with the state (a write racing this read, or
/// a rollback) and when an item has expired (removing it is a write). Under the write turn, with
/// the state just verified, no write of this process can race it: a disagreeing row is then a
/// rollback, reported as such.
extension EncryptedVault {
    /// What the reads may use: a copy of the actor's keys, verified state and newest generation.
    struct ReadView: Sendable {
        var keys: ItemKeys?
        var verified: (state: SealedVaultState, map: StateMap)?
        var seen: (vaultID: [UInt8], generation: UInt64)?

        /// The state read is the one verified, and not older than any seen (as `verify` checks).
        func trusts(_ state: SealedVaultState) -> StateMap? {
            guard let verified, verified.state == state else { return nil }
            if let seen, seen.vaultID != state.vaultID || state.generation < seen.generation { return nil }
            return verified.map
        }
    }

    /// What one run of a read body gives.
    enum Read<Answer> {
        case answer(Answer)
        /// The view cannot answer: run again under the write turn.
        case stale
        /// The item under this lookup has expired: it is to be removed, and is not found.
        case expired([UInt8])
    }

    // MARK: Retrieve

    /// ``retrieve(_:)`` on the caller's thread: the item, or nil when only ``retrieve(_:)`` can
    /// answer. Throws `.locked`, `.notFound` and `.integrityFailure` as ``retrieve(_:)`` does.
    public nonisolated func retrieveNow(_ key: ItemKey) throws -> RetrievedItem? {
        guard case .answer(let item) = try read(key, view: published.withLock { $0 }, at: clock.now, settled: false) else { return nil }
        return item
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        if let item = try retrieveNow(key) { return item }
        let keys = try unlockedKeys()
        let read = try await settledRead(keys: keys) { view, now in try self.read(key, view: view, at: now, settled: true) }
        guard case .answer(let item) = read else {
            if case .expired(let lookup) = read { try await remove(lookup, keys: keys) }
            throw VaultError.notFound(key)
        }
        return item
    }

    /// The one body of ``retrieve(_:)``. `settled`: the state was just verified under the write
    /// turn, so a row that disagrees with it is a rollback (thrown), not a racing write.
    nonisolated func read(_ key: ItemKey, view: ReadView, at now: Date, settled: Bool) throws -> Read<RetrievedItem> {
        guard let keys = view.keys else { throw VaultError.locked }
        let lookup = keys.lookup(for: key)
        let state: SealedVaultState?, row: SealedRecord?
        do { (state, row) = try storage.read(lookup: lookup) } catch {
            if settled { throw error }
            return .stale
        }
        guard let state, let map = view.trusts(state) else { return .stale }
        let checked: SealedRecord?
        do { checked = try Self.checkRow(row, against: map[lookup], at: now) } catch {
            if settled { throw error }
            return .stale
        }
        guard let record = checked else { throw VaultError.notFound(key) }
        if let expiresAt = record.expiresAt, now >= expiresAt { return .expired(lookup) }
        let metadata: ItemMetadata
        if let opened = keys.openedMetadata.metadata(of: record) {
            metadata = opened
        } else {
            metadata = try open(metadataOf: record, keys: keys)
            keys.openedMetadata.remember(metadata, of: record)
        }
        guard metadata.key == key else {
            throw VaultError.integrityFailure("an item's record belongs to another item; the store was tampered with")
        }
        let secret = try RecordFormat.open(record.sealedSecret, keys: keys, lookup: lookup, revision: record.revision, part: .secret)
        return .answer(RetrievedItem(metadata: metadata, secret: secret))
    }

    /// Runs `body` under the write turn against a freshly verified state, again while another
    /// process changes the state between the verification and the read.
    func settledRead<Answer>(keys: ItemKeys, _ body: (ReadView, Date) throws -> Read<Answer>) async throws -> Read<Answer> {
        try await withWriteTurn {
            for _ in 0..<16 {
                _ = try await verifiedState(keys: keys)
                let read = try body(published.withLock { $0 }, clock.now)
                if case .stale = read { continue }
                return read
            }
            throw VaultError.storageFailure("the vault kept changing under this read (another process writes to it); try again")
        }
    }

    // MARK: List

    /// The most rows ``listNow(service:)`` opens: a list of more (a secretbox open each) would hold
    /// the caller's event loop for milliseconds, so ``list(service:)`` answers it.
    public static let maximumRowsListedNow = 256

    /// ``list(service:)`` on the caller's thread, or nil when only ``list(service:)`` can answer
    /// (also for more than ``maximumRowsListedNow`` rows).
    public nonisolated func listNow(service: String?) throws -> [ItemMetadata]? {
        let read = try list(service: service, view: published.withLock { $0 }, at: clock.now, settled: false, limit: Self.maximumRowsListedNow)
        guard case .answer(let items) = read else { return nil }
        return items
    }

    public func list(service: String?) async throws -> [ItemMetadata] {
        if let items = try listNow(service: service) { return items }
        let keys = try unlockedKeys()
        _ = try await purgeExpired()
        let read = try await settledRead(keys: keys) { view, now in
            try self.list(service: service, view: view, at: now, settled: true, limit: nil)
        }
        guard case .answer(let items) = read else { return [] }
        return items
    }

    /// The one body of ``list(service:)``: the live items, checked against the state, in listing
    /// order. Unsettled, an expired row (purging it is a write), a damaged row or more than `limit`
    /// rows leave the answer to the settled run, which skips expired rows and reports damaged ones.
    nonisolated func list(service: String?, view: ReadView, at now: Date, settled: Bool, limit: Int?) throws -> Read<[ItemMetadata]> {
        guard let keys = view.keys else { throw VaultError.locked }
        let state: SealedVaultState?, records: [SealedRecord]
        do { (state, records) = try storage.listings() } catch {
            if settled { throw error }
            return .stale
        }
        guard let state, let map = view.trusts(state), records.count <= limit ?? .max else { return .stale }
        if !settled, records.contains(where: { $0.expiresAt.map { now >= $0 } ?? false }) { return .stale }
        var result: [ItemMetadata] = []
        var damaged = 0
        // Rows the state names that are gone (and not expired) were deleted behind the vault's back.
        let present = Set(records.map(\.lookup))
        damaged += map.lookups.filter { !present.contains($0) && !(map[$0]!.isExpired(at: now)) }.count
        for record in records {
            let checked: SealedRecord?
            do { checked = try Self.checkRow(record, against: map[record.lookup], at: now) } catch {
                damaged += 1
                continue
            }
            guard let checked else { continue }  // expired
            guard let metadata = try? open(metadataOf: checked, keys: keys) else {
                damaged += 1
                continue
            }
            if metadata.isExpired(at: now) { continue }
            if let service, metadata.service != service { continue }
            result.append(metadata)
        }
        if damaged > 0 {
            guard settled else { return .stale }
            throw VaultError.integrityFailure(
                "\(damaged) stored item(s) failed their integrity check; they were damaged or tampered with. Items you can name still open with retrieve; delete the damaged ones and store them again")
        }
        return .answer(result.sortedForListing())
    }

    // MARK: Locking and key sources

    /// Whether the vault is locked, on the caller's thread.
    public nonisolated var isLockedNow: Bool {
        published.withLock { $0.keys == nil }
    }

    public var isLocked: Bool { isLockedNow }

    /// The key of the logs' service pseudonyms (derived from the master key, so stable across
    /// passphrase changes and restarts), or nil while the vault is locked.
    public nonisolated func logNamesKeyNow() -> SecureBytes? {
        published.withLock { $0.keys?.logNamesKey }
    }

    /// ``keySourceKinds()`` on the caller's thread (never nil: the storage reads without waiting).
    public nonisolated func keySourceKindsNow() throws -> [String]? {
        try decodedKeySourceKinds()
    }

    /// The kinds of key that can unlock this vault: `passphrase`, `keyfile`, `secret-service`.
    public func keySourceKinds() async throws -> [String] {
        try decodedKeySourceKinds()
    }

    /// The one body of ``keySourceKinds()``. The header changes only when a key source is added or
    /// removed: the kinds decoded from the same bytes are the answer again (Status asks at every call).
    nonisolated func decodedKeySourceKinds() throws -> [String] {
        guard let bytes = try storage.readHeader() else { throw Self.missingHeader }
        if let known = decodedHeaderKinds.withLock({ $0?.bytes == bytes ? $0?.kinds : nil }) { return known }
        let kinds = try VaultHeader.decode(bytes).slots.map(\.kind.rawValue)
        decodedHeaderKinds.withLock { $0 = (bytes, kinds) }
        return kinds
    }
}
