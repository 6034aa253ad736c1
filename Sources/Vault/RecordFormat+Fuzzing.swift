import VaultCore
import VaultCrypto

/// The stored-row readers of ``RecordFormat``, ``SealedMetadata`` and ``VaultHeader``, for the
/// libFuzzer targets in `Fuzz/` (a separate package, so it sees only what is public). Not API:
/// `@_spi(Fuzzing)` keeps them out of every normal import.
///
/// Each reader takes a master key, so a fuzzer can present bytes as a stored row of a vault whose
/// key it knows and check that anything not sealed under that key fails closed.
@_spi(Fuzzing) public enum StoredRowFuzzing {
    /// Opens `sealed` as the metadata part of row (`lookup`, `revision`), as every list and read does.
    public static func openMetadata(_ sealed: [UInt8], master: SecureBytes, lookup: [UInt8], revision: UInt64) throws -> ItemMetadata {
        let keys = ItemKeys(master: master)
        let plaintext = try RecordFormat.open(sealed, keys: keys, lookup: lookup, revision: revision, part: .metadata)
        return try SealedMetadata.decode(plaintext)
    }

    /// Opens `sealed` as the secret part of row (`lookup`, `revision`).
    public static func openSecret(_ sealed: [UInt8], master: SecureBytes, lookup: [UInt8], revision: UInt64) throws -> SecureBytes {
        try RecordFormat.open(sealed, keys: ItemKeys(master: master), lookup: lookup, revision: revision, part: .secret)
    }

    /// Seals `plaintext` as the metadata part of a row: lets a fuzzer reach the metadata decoder
    /// behind the authenticated encryption with bytes of its choosing.
    public static func sealMetadata(_ plaintext: SecureBytes, master: SecureBytes, lookup: [UInt8], revision: UInt64) throws -> [UInt8] {
        try RecordFormat.seal(plaintext, keys: ItemKeys(master: master), lookup: lookup, revision: revision, part: .metadata)
    }

    /// The encoding a store writes for `metadata` (what ``openMetadata`` decodes).
    public static func encodeMetadata(_ metadata: ItemMetadata) throws -> SecureBytes {
        try SealedMetadata(metadata).encoded()
    }

    /// Decodes a stored key envelope and encodes it again; throws as opening the vault would when it is refused.
    public static func reencodeHeader(_ bytes: [UInt8]) throws -> [UInt8] {
        try VaultHeader.decode(bytes).encoded()
    }
}
