import Foundation
import VaultCore
import VaultCrypto

/// The fast path: reads answered on the caller's thread, without the actor, from what the actor
/// last verified (``ReadView``) and one synchronous storage read (``SealedStorageReadingNow``).
///
/// ```swift
/// if let item = try vault.retrieveNow(key) { reply(item) } else { reply(try await vault.retrieve(key)) }
/// ```
///
/// It is exactly as strict as the async path because it only answers when the async path would
/// answer the same without writing or re-verifying: the state row read must equal the state the
/// actor last authenticated (and not be older than any generation seen), and the row must agree
/// with that state's entry. Anything else — a state changed since (another process wrote, or a
/// rollback), a row that disagrees (a write racing this read, or a rollback), an expired item (the
/// async path deletes it), a storage error — returns nil, and the caller takes the async path,
/// which re-verifies, re-reads under the write turn and reports a rollback as it always did.
extension EncryptedVault {
    /// What the fast path may use: a copy of the actor's keys, verified state and newest generation.
    struct ReadView: Sendable {
        var keys: ItemKeys?
        var verified: (state: SealedVaultState, map: StateMap)?
        var seen: (vaultID: [UInt8], generation: UInt64)?

        /// The state read is the one verified, and not older than any seen (as `verify` checks).
        func trusts(_ state: SealedVaultState) -> (keys: ItemKeys, map: StateMap)? {
            guard let keys, let verified, verified.state == state else { return nil }
            if let seen, seen.vaultID != state.vaultID || state.generation < seen.generation { return nil }
            return (keys, verified.map)
        }
    }

    /// The key of the logs' service pseudonyms (derived from the master key, so stable across
    /// passphrase changes and restarts), or nil while the vault is locked.
    public nonisolated func logNamesKeyNow() -> SecureBytes? {
        published.withLock { $0.keys?.logNamesKey }
    }

    /// ``retrieve(_:)`` without an actor hop: the item, or nil when only the async path can answer.
    /// Throws `.locked`, `.notFound` and `.integrityFailure` as ``retrieve(_:)`` does.
    public nonisolated func retrieveNow(_ key: ItemKey) throws -> RetrievedItem? {
        let view = published.withLock { $0 }
        guard let keys = view.keys else { throw VaultError.locked }
        guard let readsNow else { return nil }
        let now = clock.now
        let lookup = keys.lookup(for: key)
        guard let (state, row) = try? readsNow.readNow(lookup: lookup), let state, let (_, map) = view.trusts(state) else { return nil }
        let checked: SealedRecord?
        do { checked = try Self.checkRow(row, against: map[lookup], at: now) } catch { return nil }
        guard let record = checked else { throw VaultError.notFound(key) }
        if let expiresAt = record.expiresAt, now >= expiresAt { return nil }
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
        return RetrievedItem(metadata: metadata, secret: secret)
    }

    /// The most rows ``listNow(service:)`` opens: a list of more (a secretbox open each) would hold
    /// the caller's event loop for milliseconds, so it goes to the async path.
    public static let maximumRowsListedNow = 256

    /// ``list(service:)`` without an actor hop, or nil when only the async path can answer (also when
    /// a row has expired: the async path purges it first, which is a write; and for more than
    /// ``maximumRowsListedNow`` rows).
    public nonisolated func listNow(service: String?) throws -> [ItemMetadata]? {
        let view = published.withLock { $0 }
        guard view.keys != nil else { throw VaultError.locked }
        guard let readsNow else { return nil }
        let now = clock.now
        guard let (state, records) = try? readsNow.listNow(), records.count <= Self.maximumRowsListedNow,
              let state, let (keys, map) = view.trusts(state),
              !records.contains(where: { $0.expiresAt.map { now >= $0 } ?? false })
        else { return nil }
        return try? listing(records, service: service, keys: keys, map: map, at: now)
    }

    /// ``keySourceKinds()`` without an actor hop, or nil when the storage has no synchronous reads.
    public nonisolated func keySourceKindsNow() throws -> [String]? {
        guard let readsNow else { return nil }
        guard let bytes = try readsNow.readHeaderNow() else { throw Self.missingHeader }
        // The header changes only when a key source is added or removed: the kinds decoded from
        // these exact bytes are the answer again (Status asks at every call).
        if let known = decodedHeaderKinds.withLock({ $0?.bytes == bytes ? $0?.kinds : nil }) { return known }
        let kinds = try VaultHeader.decode(bytes).slots.map(\.kind.rawValue)
        decodedHeaderKinds.withLock { $0 = (bytes, kinds) }
        return kinds
    }

    /// Whether the vault is locked, without an actor hop.
    public nonisolated var isLockedNow: Bool {
        published.withLock { $0.keys == nil }
    }
}
