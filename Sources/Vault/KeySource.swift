import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// How a new vault's master key is protected.
public enum NewKeySource: Sendable {
    /// A passphrase stretched with Argon2id at `cost` (default: libsodium's MODERATE, ~0.5 s).
    case passphrase(SecureBytes, cost: Argon2Cost = .moderate)
    /// The 32 bytes of a key file (see ``KeyFile``).
    case keyFile(SecureBytes)
    /// 32 random bytes the caller keeps in the desktop keyring (Secret Service) under `keyID`. The
    /// vault only records `keyID`, so the daemon can find the item again; it never sees the keyring.
    case secretService(SecureBytes, keyID: String)
}

/// What unlocks an existing vault.
public enum UnlockCredential: Sendable {
    case passphrase(SecureBytes)
    case keyFile(SecureBytes)
    /// The 32 bytes fetched from the desktop keyring for the slot's key ID.
    case secretService(SecureBytes)

    var slotKind: KeySlot.Kind {
        switch self {
        case .passphrase: return .passphrase
        case .keyFile: return .keyFile
        case .secretService: return .secretService
        }
    }
}

/// The master key: 32 random bytes, never stored unwrapped.
enum MasterKey {
    static let count = 32
}

/// Builds and opens key slots. Key derivation here is deliberately slow for passphrases; callers run
/// it off the vault actor so other clients are not held up.
enum KeySlots {
    static func make(for source: NewKeySource, wrapping master: SecureBytes) throws -> KeySlot {
        let salt = SecureRandom.bytes(count: PasswordHash.saltCount)
        switch source {
        case let .passphrase(passphrase, cost):
            let kek = try PasswordHash.deriveKey(passphrase: passphrase, salt: salt, cost: cost)
            return KeySlot(kind: .passphrase, operations: cost.operations, memoryBytes: cost.memoryBytes,
                           salt: Data(salt), wrappedKey: Data(try SecretBox.seal(master, key: kek)))
        case let .keyFile(fileKey):
            let kek = keyFileKEK(fileKey, salt: salt)
            return KeySlot(kind: .keyFile, operations: nil, memoryBytes: nil,
                           salt: Data(salt), wrappedKey: Data(try SecretBox.seal(master, key: kek)))
        case let .secretService(keyringKey, keyID):
            guard KeySlot.isValidKeyID(keyID) else {
                throw VaultError.invalidArgument("a Secret Service key ID must be 32 lowercase hex digits")
            }
            let kek = secretServiceKEK(keyringKey, salt: salt)
            return KeySlot(kind: .secretService, operations: nil, memoryBytes: nil, salt: Data(salt),
                           wrappedKey: Data(try SecretBox.seal(master, key: kek)), keyID: keyID)
        }
    }

    /// Unwraps the master key from the slot that matches `credential`.
    static func open(_ header: VaultHeader, with credential: UnlockCredential) throws -> SecureBytes {
        guard let slot = header.slots.first(where: { $0.kind == credential.slotKind }) else {
            throw VaultError(.keySourceRejected, "this vault is not protected by a \(credential.slotKind.rawValue); use its own key source")
        }
        let kek: SecureBytes
        switch credential {
        case let .passphrase(passphrase):
            guard let cost = slot.cost, cost.isWithinBounds else {
                throw VaultError(.kdfCostOutOfBounds, "the vault's key-derivation cost is out of bounds; refusing to open it")
            }
            do {
                kek = try PasswordHash.deriveKey(passphrase: passphrase, salt: Array(slot.salt), cost: cost)
            } catch {
                throw VaultError(.storageFailure, "key derivation failed: not enough memory for \(cost)")
            }
        case let .keyFile(fileKey):
            kek = keyFileKEK(fileKey, salt: Array(slot.salt))
        case let .secretService(keyringKey):
            kek = secretServiceKEK(keyringKey, salt: Array(slot.salt))
        }
        do {
            return try SecretBox.open(Array(slot.wrappedKey), key: kek)
        } catch {
            switch credential {
            case .passphrase:
                throw VaultError(.wrongPassphrase, "wrong passphrase: the vault did not open; check it and try again")
            case .keyFile:
                throw VaultError(.wrongPassphrase, "the key file does not open this vault; use the key file made for it")
            case .secretService:
                throw VaultError(.wrongPassphrase,
                    "the key in the desktop keyring does not open this vault; unlock with the recovery passphrase: `sortedvault unlock`")
            }
        }
    }

    private static func secretServiceKEK(_ keyringKey: SecureBytes, salt: [UInt8]) -> SecureBytes {
        KeyedHash.deriveKey(from: keyringKey, context: "sortedvault kek secret-service v1", parts: [salt])
    }

    private static func keyFileKEK(_ fileKey: SecureBytes, salt: [UInt8]) -> SecureBytes {
        KeyedHash.deriveKey(from: fileKey, context: "sortedvault kek keyfile v1", parts: [salt])
    }
}
