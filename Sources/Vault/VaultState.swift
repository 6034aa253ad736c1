import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// The vault-wide authenticated state as a storage keeps it: how many rows exist and at which
/// generation, bound by `tag` to every row's `(lookup, revision, expiry)` (the ``StateEntry`` list the
/// storage keeps beside it). ``EncryptedVault`` writes both in the same transaction as every change of
/// a row and checks them on unlock and on every read, so a row put back from an older copy (its
/// revision, metadata and secret together), a row deleted or resurrected behind the vault's back, or
/// an older copy of the whole state is refused.
///
/// `tag` is a keyed BLAKE2b over the vault id, the generation, the count and the XOR of a keyed
/// BLAKE2b of each entry (an XOR-MAC: a change updates it in O(1); the aggregate itself is never
/// stored), all under keys derived from the master key, so only the vault can write a valid state.
public struct SealedVaultState: Sendable, Equatable {
    /// 16 random bytes naming this vault; also kept in the external ``GenerationRecord``.
    public var vaultID: [UInt8]
    /// Incremented on every change of the state; never goes back.
    public var generation: UInt64
    /// How many entries the state names.
    public var count: UInt64
    public var tag: [UInt8]

    public init(vaultID: [UInt8], generation: UInt64, count: UInt64, tag: [UInt8]) {
        self.vaultID = vaultID
        self.generation = generation
        self.count = count
        self.tag = tag
    }
}

/// One row as the state names it: its lookup, revision and expiry.
public struct StateEntry: Sendable, Equatable {
    public var lookup: [UInt8]
    public var revision: UInt64
    /// Seconds since 1970, exactly as stored (the state hashes these bits, so no `Date` round trip).
    public var expiresAt: Double?

    public init(lookup: [UInt8], revision: UInt64, expiresAt: Double?) {
        self.lookup = lookup
        self.revision = revision
        self.expiresAt = expiresAt
    }
}

/// A storage refuses a state write because the stored generation is no longer the one the vault
/// read (another writer got there first); the vault reads again and retries.
public struct StateConflict: Error, Sendable {
    public init() {}
}

/// The authenticated content of the state, in memory: lookup → (revision, expiry).
struct StateMap: Equatable {
    struct Entry: Equatable {
        var revision: UInt64
        /// Seconds since 1970 as stored: `Date` ↔ seconds-since-1970 is not an exact round trip.
        var expiresAt: Double?

        init(revision: UInt64, expiresAt: Double?) {
            self.revision = revision
            self.expiresAt = expiresAt
        }

        /// The entry of a row about to be written with this expiry (the storage stores the same expression).
        init(revision: UInt64, expiry: Date?) {
            self.init(revision: revision, expiresAt: expiry?.timeIntervalSince1970)
        }

        func isExpired(at now: Date) -> Bool { expiresAt.map { now >= Date(timeIntervalSince1970: $0) } ?? false }

        /// Whether a row's expiry is this one, up to the rounding of a `Date` round trip (a microsecond).
        func hasExpiry(_ expiry: Date?) -> Bool {
            switch (expiry, expiresAt) {
            case (nil, nil): true
            case (let date?, let seconds?): abs(date.timeIntervalSince1970 - seconds) <= 1e-6
            default: false
            }
        }
    }

    /// The entries in 256 dictionaries, by the lookup's first byte (a keyed hash, so they fill
    /// evenly). The reads' view shares the map; a store, which changes one entry, then copies one
    /// of them and the 256 references, not the whole map, which with many items would dominate the
    /// cost of a store.
    private var buckets = [[[UInt8]: Entry]](repeating: [:], count: 256)
    private(set) var count = 0

    init() {}

    /// The map of a storage's entry list; nil when a lookup appears twice.
    init?(_ list: [StateEntry]) {
        for item in list {
            guard self[item.lookup] == nil else { return nil }
            self[item.lookup] = Entry(revision: item.revision, expiresAt: item.expiresAt)
        }
    }

    private static func bucket(_ lookup: [UInt8]) -> Int { Int(lookup.first ?? 0) }

    subscript(lookup: [UInt8]) -> Entry? {
        get { buckets[Self.bucket(lookup)][lookup] }
        set {
            let bucket = Self.bucket(lookup)
            let old: Entry?
            if let newValue {
                old = buckets[bucket].updateValue(newValue, forKey: lookup)
            } else {
                old = buckets[bucket].removeValue(forKey: lookup)
            }
            count += (newValue == nil ? 0 : 1) - (old == nil ? 0 : 1)
        }
    }

    var lookups: [[UInt8]] { buckets.flatMap(\.keys) }

    var list: [StateEntry] {
        buckets.flatMap { bucket in
            bucket.map { StateEntry(lookup: $0.key, revision: $0.value.revision, expiresAt: $0.value.expiresAt) }
        }
    }

    func hasExpired(at now: Date) -> Bool { buckets.contains { $0.values.contains { $0.isExpired(at: now) } } }

    /// Entries whose authenticated expiry has passed are gone: a purge may have removed their rows.
    func droppingExpired(at now: Date) -> StateMap {
        var copy = self
        copy.buckets = buckets.map { $0.filter { !$0.value.isExpired(at: now) } }
        copy.count = copy.buckets.reduce(0) { $0 + $1.count }
        return copy
    }

    /// The XOR of every entry's keyed hash: the state's aggregate, kept in memory only.
    func digest(keys: ItemKeys) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        for bucket in buckets {
            for (lookup, entry) in bucket { xor(&out, keys.entryTag(lookup: lookup, entry: entry)) }
        }
        return out
    }
}

/// `into ^= other`, for 32-byte aggregates.
func xor(_ into: inout [UInt8], _ other: [UInt8]) {
    for index in into.indices { into[index] ^= other[index] }
}
