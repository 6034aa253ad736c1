import VaultCore
import VaultCrypto

/// The working keys derived from the master key while the vault is unlocked. Dropping the value
/// zeroes them (they live in ``SecureBytes``).
struct ItemKeys: Sendable {
    private let lookupKey: SecureBytes
    private let recordRoot: SecureBytes

    init(master: SecureBytes) {
        lookupKey = KeyedHash.deriveKey(from: master, context: "sortedvault lookup v1", parts: [])
        recordRoot = KeyedHash.deriveKey(from: master, context: "sortedvault record v1", parts: [])
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
