import FoundationEssentials

import VaultCore
import VaultCrypto

/// A backup's read: every live item, secrets and sortedvault's own records included, from one
/// storage snapshot checked against a freshly verified state.
extension EncryptedVault: TokenStoreSnapshots {
    public func snapshot() async throws -> [RetrievedItem] {
        let keys = try unlockedKeys()
        _ = try await purgeExpired()
        let read = try await settledRead(keys: keys) { view, now in try self.snapshot(view: view, at: now) }
        guard case .answer(let items) = read else { return [] }
        return items
    }

    /// Unlike a listing, a backup does not leave out a damaged record: it fails, naming how many,
    /// so that a backup is never silently short.
    nonisolated func snapshot(view: ReadView, at now: Date) throws -> Read<[RetrievedItem]> {
        guard let keys = view.keys else { throw VaultError.locked }
        let (state, records) = try storage.snapshot()
        guard let state, let map = view.trusts(state) else { return .stale }
        let present = Set(records.map(\.lookup))
        var damaged = map.lookups.filter { !present.contains($0) && !(map[$0]!.isExpired(at: now)) }.count
        var items: [RetrievedItem] = []
        for record in records {
            do {
                guard let checked = try Self.checkRow(record, against: map[record.lookup], at: now) else { continue }
                let metadata = try open(metadataOf: checked, keys: keys)
                if metadata.isExpired(at: now) { continue }
                let secret = try RecordFormat.open(checked.sealedSecret, keys: keys, lookup: checked.lookup,
                                                   revision: checked.revision, part: .secret)
                items.append(RetrievedItem(metadata: metadata, secret: secret))
            } catch {
                damaged += 1
            }
        }
        if damaged > 0 {
            throw VaultError.integrityFailure(
                "\(damaged) stored item(s) failed their integrity check, so no backup was made (it would miss them). Items you can name still open with retrieve; delete the damaged ones and store them again")
        }
        return .answer(items.sorted { ($0.metadata.service, $0.metadata.account) < ($1.metadata.service, $1.metadata.account) })
    }
}
