import Foundation
import VaultCore

/// The vault-wide authenticated state as a storage keeps it: which rows exist, at which revision and
/// expiry, at which generation. ``EncryptedVault`` writes it in the same transaction as every change
/// of a row and checks it on unlock and on every read, so a row put back from an older copy (its
/// revision, metadata and secret together), a row deleted or resurrected behind the vault's back, or
/// an older copy of the whole state is refused.
///
/// `entries` is the ``StateMap`` encoding; `tag` is a keyed BLAKE2b over the vault id, the generation
/// and `entries` under a key derived from the master key, so only the vault can write a valid state.
public struct SealedVaultState: Sendable, Equatable {
    /// 16 random bytes naming this vault; also kept in the external ``GenerationRecord``.
    public var vaultID: [UInt8]
    /// Incremented on every change of the state; never goes back.
    public var generation: UInt64
    public var entries: [UInt8]
    public var tag: [UInt8]

    public init(vaultID: [UInt8], generation: UInt64, entries: [UInt8], tag: [UInt8]) {
        self.vaultID = vaultID
        self.generation = generation
        self.entries = entries
        self.tag = tag
    }
}

/// A storage refuses a state write because the stored generation is no longer the one the vault
/// read (another writer got there first); the vault reads again and retries.
public struct StateConflict: Error, Sendable {
    public init() {}
}

/// The authenticated content of the state: lookup → (revision, expiry), sorted by lookup.
/// Encoded as fixed 49-byte entries: `lookup(32) ‖ revision(8, LE) ‖ hasExpiry(1) ‖ expiry bits(8, LE)`.
struct StateMap: Equatable {
    struct Entry: Equatable {
        var revision: UInt64
        var expiresAt: Date?

        func isExpired(at now: Date) -> Bool { expiresAt.map { now >= $0 } ?? false }
    }

    static let lookupCount = 32
    static let entryCount = lookupCount + 17

    private(set) var entries: [[UInt8]: Entry] = [:]

    subscript(lookup: [UInt8]) -> Entry? {
        get { entries[lookup] }
        set { entries[lookup] = newValue }
    }

    var lookups: Dictionary<[UInt8], Entry>.Keys { entries.keys }

    /// Entries whose authenticated expiry has passed are gone: a purge may have removed their rows.
    mutating func dropExpired(at now: Date) {
        entries = entries.filter { !$0.value.isExpired(at: now) }
    }

    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(entries.count * Self.entryCount)
        for lookup in entries.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let entry = entries[lookup]!
            out += lookup
            out += withUnsafeBytes(of: entry.revision.littleEndian, Array.init)
            out.append(entry.expiresAt == nil ? 0 : 1)
            out += withUnsafeBytes(of: (entry.expiresAt?.timeIntervalSince1970.bitPattern ?? 0).littleEndian, Array.init)
        }
        return out
    }

    /// Parses an authenticated encoding (call only after the tag checked out).
    static func decode(_ bytes: [UInt8]) throws -> StateMap {
        guard bytes.count % entryCount == 0 else { throw damaged }
        var map = StateMap()
        var offset = 0
        while offset < bytes.count {
            let lookup = Array(bytes[offset..<offset + lookupCount])
            let revision = UInt64(littleEndian: bytes[offset + 32..<offset + 40].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
            let hasExpiry = bytes[offset + 40]
            let bits = UInt64(littleEndian: bytes[offset + 41..<offset + 49].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
            guard hasExpiry <= 1, map.entries[lookup] == nil else { throw damaged }
            map.entries[lookup] = Entry(revision: revision,
                                        expiresAt: hasExpiry == 1 ? Date(timeIntervalSince1970: Double(bitPattern: bits)) : nil)
            offset += entryCount
        }
        return map
    }

    private static var damaged: VaultError {
        VaultError.integrityFailure("the vault's state opened but is not valid; the vault was written by a faulty build")
    }
}
