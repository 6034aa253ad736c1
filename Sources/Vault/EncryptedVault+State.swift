import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// The vault-wide state: how every change writes it and every read checks it (docs/rollback.md).
extension EncryptedVault {
    /// Writes the row change and the new state together, given the new state and the generation read.
    typealias StateWriter = (SealedVaultState, UInt64?) async throws -> Void

    static let recoveryHint = "If you restored an older copy on purpose, run `sortedvault recover --accept-rollback` "
        + "(what was rolled back stays rolled back); otherwise put the current vault.db back from your backup"

    static func rollback(_ what: String) -> VaultError {
        VaultError.integrityFailure("rollback detected: \(what). \(recoveryHint)")
    }

    /// At open, while locked: the clear vault id and generation against the external record.
    /// (The tag, which covers both, is checked at unlock.)
    static func checkAgainstRecord(_ state: SealedVaultState?, _ record: (any GenerationRecord)?) throws {
        guard let record, let recorded = try record.read() else { return }
        guard let state else {
            throw rollback("the vault file has no state, but a vault at generation \(recorded.generation) was last opened here")
        }
        guard state.vaultID == recorded.vaultID else {
            throw rollback("this vault file is not the vault last opened here (its id differs from the generation record's)")
        }
        guard state.generation >= recorded.generation else {
            throw rollback("the vault file is at generation \(state.generation), older than generation \(recorded.generation) last seen: it is an older copy")
        }
    }

    /// At unlock: the record, then the tag. A vault from before the state gets its first one here;
    /// entries whose expiry passed leave the state here (O(n), once per unlock).
    func checkStateAtUnlock(keys: ItemKeys) async throws {
        let state = try storage.readState()
        try Self.checkAgainstRecord(state, generationRecord)
        guard let state else {
            // First unlock since the upgrade that added the state, and no record of a newer vault:
            // the rows as they are become the first state (trust on first use).
            try await acceptCurrentRows(keys: keys)
            return
        }
        let map = try await verify(state, keys: keys)
        if map.hasExpired(at: clock.now) {
            try await withWriteTurn {
                try await sealState(of: map.droppingExpired(at: clock.now), keys: keys, after: state.generation,
                                    vaultID: state.vaultID, generation: state.generation &+ 1)
            }
        }
    }

    /// The current state, authenticated, not older than any seen, with its map. Every read starts here.
    func verifiedState(keys: ItemKeys) async throws -> (SealedVaultState, StateMap) {
        guard let state = try storage.readState() else {
            throw Self.rollback("the vault's state is missing from the vault file")
        }
        return (state, try await verify(state, keys: keys))
    }

    /// Runs a read against the verified state. The state and the rows are read one after the other,
    /// so a write of this vault can land in between (a row one revision ahead of the state read, or a
    /// state older than the generation that write just recorded): a disagreement is read once more
    /// while holding the write turn, when none can. A race then reads clean; a real rollback fails again.
    func readConsistently<T>(keys: ItemKeys, _ body: (StateMap) async throws -> T) async throws -> T {
        do {
            let (_, map) = try await verifiedState(keys: keys)
            return try await body(map)
        } catch let error as VaultError where error.code == .integrityFailure {
            return try await withWriteTurn {
                let (_, map) = try await verifiedState(keys: keys)
                return try await body(map)
            }
        }
    }

    private func verify(_ state: SealedVaultState, keys: ItemKeys) async throws -> StateMap {
        if let seen {
            guard state.vaultID == seen.vaultID else { throw Self.rollback("the vault file was replaced by another vault") }
            guard state.generation >= seen.generation else {
                throw Self.rollback("the vault's state went back from generation \(seen.generation) to \(state.generation)")
            }
        }
        // The state this process last authenticated (and not older than any seen, above): its map.
        // Rows are checked against that map, so entries changed in the file alone change nothing.
        if let verified, verified.state == state { return verified.map }
        let entries = try storage.stateEntries()
        let map = StateMap(entries)
        let digest = map?.digest(keys: keys) ?? []
        guard let map, UInt64(map.count) == state.count, keys.authenticates(state, digest: digest) else {
            throw VaultError.integrityFailure(
                "the vault's state failed its integrity check: the vault file was changed outside sortedvault. \(Self.recoveryHint)")
        }
        remember(state)
        verified = (state, map, digest)
        return map
    }

    /// Notes the newest generation seen, here and in the external record. The record is written
    /// after the commit, best effort: it may lag the file (a crash, a full disk), never lead it.
    func remember(_ state: SealedVaultState) {
        if let seen, seen.vaultID == state.vaultID, seen.generation >= state.generation { return }
        seen = (state.vaultID, state.generation)
        try? generationRecord?.write(vaultID: state.vaultID, generation: state.generation)
    }

    /// One change of one row: read and verify the state, let `body` build the row's new entry (nil:
    /// gone) and its writer, then write row, entry and state in one transaction if nobody wrote in
    /// between (otherwise start again). The aggregate is updated in O(1): out the old entry, in the new.
    func changeState(keys: ItemKeys, lookup: [UInt8], _ body: (StateMap) async throws -> (StateMap.Entry?, StateWriter)) async throws {
        try await withWriteTurn {
            for _ in 0..<16 {
                let (state, map) = try await verifiedState(keys: keys)
                guard let digest = verified?.digest, verified?.state == state else { continue }
                let (entry, write) = try await body(map)
                var next = map
                next[lookup] = entry
                var nextDigest = digest
                if let old = map[lookup] { xor(&nextDigest, keys.entryTag(lookup: lookup, entry: old)) }
                if let entry { xor(&nextDigest, keys.entryTag(lookup: lookup, entry: entry)) }
                let nextState = Self.seal(keys: keys, vaultID: state.vaultID, generation: state.generation &+ 1, count: next.count, digest: nextDigest)
                do {
                    try await write(nextState, state.generation)
                } catch is StateConflict {
                    continue
                }
                remember(nextState)
                verified = (nextState, next, nextDigest)
                return
            }
            throw VaultError.storageFailure("the vault kept changing under this write (another process writes to it); try again")
        }
    }

    /// Deletes a row and its entry.
    func remove(_ lookup: [UInt8], keys: ItemKeys) async throws {
        try await changeState(keys: keys, lookup: lookup) { _ in
            (nil, { state, expected in _ = try await self.storage.delete(lookup: lookup, state: state, expected: expected) })
        }
    }

    /// Makes the rows as they are now the vault's state, at a generation above any seen: the first
    /// state of an upgraded vault, and the recovery path.
    func acceptCurrentRows(keys: ItemKeys) async throws {
        try await withWriteTurn {
            let (state, records) = try storage.listings()
            let recorded = (try? generationRecord?.read()) ?? nil
            var map = StateMap()
            for record in records {
                map[record.lookup] = StateMap.Entry(revision: record.revision, expiry: record.expiresAt)
            }
            let generation = max(state?.generation ?? 0, recorded?.generation ?? 0, seen?.generation ?? 0) &+ 1
            try await sealState(of: map, keys: keys, after: state?.generation, vaultID: state?.vaultID, generation: generation)
        }
    }

    /// Writes `map` as the whole state (a new vault id when `vaultID` is nil). Callers hold the write turn
    /// (or, at creation, nobody else can have the vault yet).
    func sealState(of map: StateMap, keys: ItemKeys, after expected: UInt64?, vaultID: [UInt8]?, generation: UInt64 = 1) async throws {
        let id = vaultID ?? SecureBytes(randomCount: 16).withUnsafeBytes { Array($0) }
        let digest = map.digest(keys: keys)
        let state = Self.seal(keys: keys, vaultID: id, generation: generation, count: map.count, digest: digest)
        try await storage.writeState(state, entries: map.list, expected: expected)
        remember(state)
        verified = (state, map, digest)
    }

    static func seal(keys: ItemKeys, vaultID: [UInt8], generation: UInt64, count: Int, digest: [UInt8]) -> SealedVaultState {
        SealedVaultState(vaultID: vaultID, generation: generation, count: UInt64(count),
                         tag: keys.stateTag(vaultID: vaultID, generation: generation, count: UInt64(count), digest: digest))
    }

    /// A row against the state's entry for it: the row to use, nil when the item is gone (absent or
    /// expired), or `.integrityFailure` when row and state disagree (a row deleted, resurrected or
    /// put back from an older copy).
    static func checkRow(_ record: SealedRecord?, against entry: StateMap.Entry?, at now: Date) throws -> SealedRecord? {
        switch (record, entry) {
        case (nil, nil):
            return nil
        case (nil, let entry?):
            if entry.isExpired(at: now) { return nil }
            throw VaultError.integrityFailure(
                "an item's row is missing from the vault file although the vault's state names it: it was deleted outside sortedvault. "
                + "Delete the item and store it again, or see docs/rollback.md")
        case (let record?, nil):
            if let expiry = record.expiresAt, now >= expiry { return nil }
            throw rollback("an item's row is in the vault file but not in the vault's state: it was put back from an older copy after it was deleted")
        case (let record?, let entry?):
            guard record.revision == entry.revision, entry.hasExpiry(record.expiresAt) else {
                throw rollback("an item's row is at revision \(record.revision) where the vault's state says \(entry.revision)"
                               + (record.revision == entry.revision ? " (its clear expiry was changed)" : ": it was put back from an older copy"))
            }
            return record
        }
    }
}
