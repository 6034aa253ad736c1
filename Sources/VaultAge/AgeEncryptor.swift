import VaultCrypto

/// Seals bytes into an age v1 file (age-encryption.org/v1) that `age -d` and ``AgeDecryptor`` open.
///
/// ```swift
/// let sealer = try AgeEncryptor(recipients: [.x25519("age1…"), .x25519("age1…")])
/// let file = try sealer.seal(backup)                     // binary; `armored: true` for PEM text
/// ```
///
/// Each call draws a fresh file key, stanza randomness and payload nonce, so sealing the same bytes
/// twice gives unrelated files. Do not list a passphrase recipient beside any other: the format
/// forbids it, and the initialiser refuses it.
public struct AgeEncryptor: Sendable {
    public let recipients: [AgeRecipient]

    /// Throws ``AgeError/Code/invalidRecipient`` for no recipients or a passphrase among others.
    public init(recipients: [AgeRecipient]) throws {
        guard !recipients.isEmpty else { throw AgeError(.invalidRecipient, "an age file needs at least one recipient") }
        if recipients.contains(where: \.isScrypt), recipients.count > 1 {
            throw AgeError(.invalidRecipient, "a passphrase recipient must be the only recipient of a file")
        }
        self.recipients = recipients
    }

    /// The age file of `plaintext`; ASCII-armored (PEM, `-----BEGIN AGE ENCRYPTED FILE-----`) when `armored`.
    public func seal<Bytes: ReadableBytes>(_ plaintext: Bytes, armored: Bool = false) throws -> [UInt8] {
        let fileKey = AgeFileKey.generate()
        let stanzas = try recipients.map { try $0.wrap(fileKey) }
        let macInput = AgeHeader.macInput(for: stanzas)
        let mac = macInput.withUnsafeBytes { AgeFileKey.headerMAC(fileKey: fileKey, header: $0) }
        var file = AgeHeader.encode(macInput: macInput, mac: mac)
        plaintext.withUnsafeBytes { AgeStream.seal($0, fileKey: fileKey, appendingTo: &file) }
        return armored ? AgeArmor.encode(file) : file
    }
}
