import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A store waiting for its group's commit. Created, read and resumed only on the vault's actor
/// (`@unchecked` because the compiler cannot see that a continuation closure runs there too).
final class PendingStore: @unchecked Sendable {
    let key: ItemKey
    let lookup: [UInt8]
    let secret: SecureBytes
    let options: StoreOptions
    /// Resumed with `false` once the store is durable (or with its error); with `true` when this
    /// store's caller is to lead the next group.
    var continuation: CheckedContinuation<Bool, any Error>?

    init(key: ItemKey, lookup: [UInt8], secret: SecureBytes, options: StoreOptions) {
        self.key = key
        self.lookup = lookup
        self.secret = secret
        self.options = options
    }
}

/// Group commit: stores that arrive while another commits share the next transaction and its fsync.
///
/// One caller at a time leads: it takes the waiting stores (one per row; a second store of the same
/// row waits for the next group), writes their rows and the vault-wide state once, in one
/// transaction, answers each store of the group, and hands the lead to the first store still
/// waiting. A store is answered only after the transaction that holds it is durable; when that
/// transaction fails, every store in it fails (nothing is acknowledged that was not written).
extension EncryptedVault {
    /// Leads one group, with `leader` (the caller's own store) first in it.
    func commitGroups(keys: ItemKeys, leader: PendingStore) async throws {
        var group: [PendingStore] = []
        var rest: [PendingStore] = []
        var lookups = Set<[UInt8]>()
        for request in pendingStores {
            if lookups.insert(request.lookup).inserted { group.append(request) } else { rest.append(request) }
        }
        pendingStores = rest
        // The group is not its leader's alone: a leader whose caller is cancelled while it waits
        // for the write turn still commits the others' stores (a task of its own is not cancelled).
        let results = await Task { await self.commit(group, keys: keys) }.value
        var mine: Result<Void, any Error> = .success(())
        for (request, result) in zip(group, results) {
            if request === leader {
                mine = result
            } else {
                request.continuation?.resume(with: result.map { false })
            }
        }
        if let next = pendingStores.first {
            next.continuation?.resume(returning: true)
        } else {
            groupCommitRunning = false
        }
        try mine.get()
    }

    /// Writes one group (of one or more stores) in one transaction; one result per store, in order.
    private func commit(_ group: [PendingStore], keys: ItemKeys) async -> [Result<Void, any Error>] {
        do {
            return try await withWriteTurn {
                for _ in 0..<16 {
                    let (state, map) = try await verifiedState(keys: keys)
                    guard let digest = verified?.digest, verified?.state == state else { continue }
                    var next = map
                    var nextDigest = digest
                    var records: [SealedRecord] = []
                    var results = [Result<Void, any Error>](repeating: .success(()), count: group.count)
                    let now = clock.now
                    for (index, request) in group.enumerated() {
                        do {
                            let record = try sealRecord(for: request, existing: try storage.read(lookup: request.lookup).record, map: map, keys: keys, at: now)
                            let entry = StateMap.Entry(revision: record.revision, expiry: record.expiresAt)
                            if let old = map[request.lookup] { xor(&nextDigest, keys.entryTag(lookup: request.lookup, entry: old)) }
                            xor(&nextDigest, keys.entryTag(lookup: request.lookup, entry: entry))
                            next[request.lookup] = entry
                            records.append(record)
                        } catch {
                            results[index] = .failure(error)
                        }
                    }
                    guard !records.isEmpty else { return results }
                    let nextState = Self.seal(keys: keys, vaultID: state.vaultID, generation: state.generation &+ 1, count: next.count, digest: nextDigest)
                    do {
                        try await storage.put(records, state: nextState, expected: state.generation)
                    } catch is StateConflict {
                        continue
                    }
                    remember(nextState)
                    verified = (nextState, next, nextDigest)
                    return results
                }
                throw VaultError.storageFailure("the vault kept changing under this write (another process writes to it); try again")
            }
        } catch {
            return group.map { _ in .failure(error) }
        }
    }
}
