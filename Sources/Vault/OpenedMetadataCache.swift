import VaultCrypto
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import VaultCore

/// Item metadata a retrieve has opened and checked, by row: a retrieve of an unchanged row skips
/// the metadata's secretbox open and JSON decode, a sizeable part of a retrieve's work.
///
/// It is exactly as strict as opening again: an entry is used only when the row read now has the
/// same lookup, revision and clear expiry and *byte for byte the same sealed metadata* as the row it
/// was opened from. Opening is deterministic (the same ciphertext under the same keys and the same
/// row and revision gives the same plaintext, or fails the same way), so the answer is the one
/// opening would give. It belongs to one ``ItemKeys`` value: locking drops the keys, and with them
/// every name held here; an unlock starts empty. At most ``capacity`` rows are held.
final class OpenedMetadataCache: Sendable {
    private struct Entry {
        let revision: UInt64
        let expiresAt: Date?
        let sealed: [UInt8]
        let metadata: ItemMetadata
    }

    static let capacity = 256
    private let entries = Locked<[[UInt8]: Entry]>([:])

    /// The metadata opened from `record`'s exact bytes, if held.
    func metadata(of record: SealedRecord) -> ItemMetadata? {
        entries.withLock { entries in
            guard let entry = entries[record.lookup], entry.revision == record.revision,
                  entry.expiresAt == record.expiresAt, entry.sealed == record.sealedMetadata else { return nil }
            return entry.metadata
        }
    }

    /// Holds `metadata`, opened and checked from `record`; when full, one other row makes room.
    func remember(_ metadata: ItemMetadata, of record: SealedRecord) {
        let entry = Entry(revision: record.revision, expiresAt: record.expiresAt, sealed: record.sealedMetadata, metadata: metadata)
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[record.lookup] == nil {
                entries.remove(at: entries.startIndex)
            }
            entries[record.lookup] = entry
        }
    }
}
