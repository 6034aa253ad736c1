import VaultCore
import VaultCrypto

/// The working keys derived from the master key while the vault is unlocked. Dropping the value
/// zeroes them (they live in ``SecureBytes``).
struct ItemKeys: Sendable {
    private let lookupKey: SecureBytes
    private let recordRoot: SecureBytes
    private let stateKey: SecureBytes
    private let entryKey: SecureBytes
    /// Metadata opened under these keys (``OpenedMetadataCache``); dropped with them.
    let openedMetadata = OpenedMetadataCache()

    init(master: SecureBytes) {
        lookupKey = KeyedHash.deriveKey(from: master, context: "sortedvault lookup v1", parts: [])
        recordRoot = KeyedHash.deriveKey(from: master, context: "sortedvault record v1", parts: [])
        stateKey = KeyedHash.deriveKey(from: master, context: "sortedvault state v1", parts: [])
        entryKey = KeyedHash.deriveKey(from: master, context: "sortedvault state entry v1", parts: [])
        logNamesKey = KeyedHash.deriveKey(from: master, context: "sortedvault log names v1", parts: [])
    }

    /// Keys the pseudonyms the logs write for services (`LogNames` in the daemon).
    let logNamesKey: SecureBytes

    /// One entry's share of the state aggregate: a keyed hash of (lookup, revision, expiry).
    func entryTag(lookup: [UInt8], entry: StateMap.Entry) -> [UInt8] {
        let expiry: [UInt8] = entry.expiresAt.map { [1] + withUnsafeBytes(of: $0.bitPattern.littleEndian, Array.init) } ?? [0]
        return KeyedHash.tag(key: entryKey, context: "state entry", parts: [lookup, withUnsafeBytes(of: entry.revision.littleEndian, Array.init), expiry])
    }

    /// The tag of a vault state: binds the vault id, the generation, the count and the entries' aggregate.
    func stateTag(vaultID: [UInt8], generation: UInt64, count: UInt64, digest: [UInt8]) -> [UInt8] {
        KeyedHash.tag(key: stateKey, context: "vault state", parts: [
            vaultID, withUnsafeBytes(of: generation.littleEndian, Array.init), withUnsafeBytes(of: count.littleEndian, Array.init), digest,
        ])
    }

    /// Whether `state`'s tag is the one this vault's key gives for `digest` (constant time).
    func authenticates(_ state: SealedVaultState, digest: [UInt8]) -> Bool {
        let expected = stateTag(vaultID: state.vaultID, generation: state.generation, count: state.count, digest: digest)
        return SecureBytes(copying: expected).constantTimeEquals(state.tag)
    }

    /// The row identifier of an item: a keyed hash of its names, useless without the master key.
    func lookup(for key: ItemKey) -> [UInt8] {
        KeyedHash.tag(key: lookupKey, context: "item", parts: [Array(key.service.utf8), Array(key.account.utf8)])
    }

    /// The key that seals one part of one revision of one row. Binding the row and revision means a
    /// ciphertext moved to another row, or an older one put back, does not open.
    func recordKey(lookup: [UInt8], revision: UInt64, part: RecordPart, format: UInt8) -> SecureBytes {
        KeyedHash.deriveKey(from: recordRoot, context: "sortedvault record key", parts: [
            [format], lookup, withUnsafeBytes(of: revision.littleEndian, Array.init), [part.rawValue],
        ])
    }
}

/// The two sealed parts of a record; each has its own key.
enum RecordPart: UInt8 {
    case metadata = 1
    case secret = 2
}
