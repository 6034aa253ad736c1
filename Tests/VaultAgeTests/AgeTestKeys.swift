import VaultCrypto
import VaultAge

/// Cheap scrypt for tests: a work factor of 10 (1 MiB), passed only through the explicit
/// parameters `AgeRecipient.scrypt(passphrase:workFactor:)` and `AgeDecryptor(maximumWorkFactor:)`.
enum TestScrypt {
    static let workFactor = 10

    static func passphrase(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    static func recipient(_ text: String) throws -> AgeRecipient {
        try AgeRecipient.scrypt(passphrase: passphrase(text), workFactor: workFactor)
    }

    static func decryptor(_ text: String) -> AgeDecryptor {
        AgeDecryptor(identities: [.scrypt(passphrase: passphrase(text))], maximumWorkFactor: workFactor)
    }
}
