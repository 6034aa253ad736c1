import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// The vault's key envelope, version 1: the random master key wrapped once per key slot, LUKS-style,
/// so a key source can be added or changed without re-encrypting items.
///
/// Stored as JSON (at most ``maximumEncodedBytes``); nothing in it is secret without the key source.
struct VaultHeader: Codable, Equatable {
    static let currentFormat = 1
    static let maximumEncodedBytes = 16 * 1024

    var format: Int
    var slots: [KeySlot]

    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(self))
    }

    /// Parses a stored header, refusing oversized input, unknown formats and out-of-bounds costs.
    static func decode(_ bytes: [UInt8]) throws -> VaultHeader {
        guard bytes.count <= maximumEncodedBytes else {
            throw VaultError(.unsupportedFormat, "the vault header is \(bytes.count) bytes, over the \(maximumEncodedBytes)-byte limit; the file is damaged")
        }
        let header: VaultHeader
        do {
            header = try JSONDecoder().decode(VaultHeader.self, from: Data(bytes))
        } catch {
            throw VaultError(.unsupportedFormat, "the vault header cannot be read; the file is damaged or not a sortedvault vault")
        }
        guard header.format == currentFormat else {
            throw VaultError(.unsupportedFormat, "the vault uses format \(header.format); this sortedvault reads format \(currentFormat): upgrade sortedvault")
        }
        guard !header.slots.isEmpty, header.slots.count <= 16 else {
            throw VaultError(.unsupportedFormat, "the vault header has \(header.slots.count) key slots; the file is damaged")
        }
        for slot in header.slots { try slot.validate() }
        return header
    }
}

/// One wrapping of the master key.
struct KeySlot: Codable, Equatable {
    enum Kind: String, Codable { case passphrase, keyFile = "keyfile", secretService = "secret-service" }

    var kind: Kind
    /// Argon2id passes; passphrase slots only.
    var operations: UInt64?
    /// Argon2id memory in bytes; passphrase slots only.
    var memoryBytes: UInt64?
    /// Base64 in JSON.
    var salt: Data
    /// `nonce ‖ tag ‖ secretbox(master key)` under the key-encryption key; base64 in JSON.
    var wrappedKey: Data
    /// Which desktop-keyring item holds the key; secret-service slots only (absent, so not encoded,
    /// for the other kinds: v1 headers written before this field read and re-encode unchanged).
    var keyID: String? = nil

    /// 16 random bytes in lowercase hex: names the keyring item without saying anything about the vault.
    static func isValidKeyID(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    var cost: Argon2Cost? {
        guard let operations, let memoryBytes else { return nil }
        return Argon2Cost(operations: operations, memoryBytes: memoryBytes)
    }

    func validate() throws {
        guard salt.count == PasswordHash.saltCount, wrappedKey.count == SecretBox.overhead + MasterKey.count else {
            throw VaultError(.unsupportedFormat, "a key slot of the vault header is malformed; the file is damaged")
        }
        if kind == .secretService, !(keyID.map(Self.isValidKeyID) ?? false) {
            throw VaultError(.unsupportedFormat, "the secret-service slot has no valid key ID; the file is damaged")
        }
        if kind == .passphrase {
            guard let cost else {
                throw VaultError(.unsupportedFormat, "the passphrase slot has no key-derivation cost; the file is damaged")
            }
            guard cost.isWithinBounds else {
                throw VaultError(.kdfCostOutOfBounds,
                    "the vault asks for key-derivation cost \(cost), beyond the allowed maximum \(Argon2Cost.maximum); refusing to open a file that may have been tampered with")
            }
        }
    }
}
