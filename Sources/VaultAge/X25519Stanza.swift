import CSodium
import Crypto
import VaultCrypto

/// The X25519 recipient stanza: `-> X25519 <ephemeral share>` and the file key sealed under
/// HKDF-SHA-256(shared secret, salt = share ‖ recipient, info "age-encryption.org/v1/X25519").
enum X25519Stanza {
    static let type = "X25519"
    static let info = Array("age-encryption.org/v1/X25519".utf8)

    /// Wraps `fileKey` for the recipient's public key, with a fresh ephemeral key.
    static func wrap(_ fileKey: SecureBytes, to recipient: Curve25519.KeyAgreement.PublicKey) throws -> AgeStanza {
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let share = Array(ephemeral.publicKey.rawRepresentation)
        // A low-order recipient key gives a zero secret that anyone can compute: refuse it, as age does.
        guard let shared = try? ephemeral.sharedSecretFromKeyAgreement(with: recipient), !isZero(shared) else {
            throw AgeError(.invalidRecipient, "the X25519 recipient is a low-order point, which would seal for anyone")
        }
        let wrapKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: share + Array(recipient.rawRepresentation), sharedInfo: info, outputByteCount: 32)
        let body = wrapKey.withUnsafeBytes { ChaCha20Poly1305.wrapFileKey(fileKey, key: $0) }
        return AgeStanza(type: type, arguments: [String(decoding: AgeBase64.encode(share), as: UTF8.self)], body: body)
    }

    /// The file key, or nil when the stanza is not an X25519 stanza or was sealed for another key.
    /// Throws ``AgeError/Code/malformedHeader`` for an X25519 stanza that is broken: not exactly one
    /// argument, a share that is not canonical base64 of 32 bytes, a body that is not 32 bytes (checked
    /// before decrypting, against partitioning oracles), or a low-order share (all-zero secret).
    static func unwrap(_ stanza: AgeStanza, with privateKey: Curve25519.KeyAgreement.PrivateKey) throws -> SecureBytes? {
        guard stanza.type == type else { return nil }
        guard stanza.arguments.count == 1 else {
            throw AgeError.header("an X25519 stanza has \(stanza.arguments.count + 1) arguments instead of 2")
        }
        guard let share = AgeBase64.decode(Array(stanza.arguments[0].utf8)), share.count == 32,
              let sharePoint = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: share) else {
            throw AgeError.header("an X25519 stanza's share is not canonical base64 of 32 bytes")
        }
        guard stanza.body.count == AgeFileKey.count + ChaCha20Poly1305.tagCount else {
            throw AgeError.header("an X25519 stanza's body is \(stanza.body.count) bytes instead of 32")
        }
        guard let shared = try? privateKey.sharedSecretFromKeyAgreement(with: sharePoint) else {
            throw AgeError.header("an X25519 stanza's share is not a usable point")
        }
        guard !isZero(shared) else {
            throw AgeError.header("an X25519 stanza's share is a low-order point (the shared secret is zero)")
        }
        let wrapKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: share + Array(privateKey.publicKey.rawRepresentation), sharedInfo: info,
            outputByteCount: 32)
        return wrapKey.withUnsafeBytes { ChaCha20Poly1305.unwrapFileKey(stanza.body, key: $0) }
    }

    /// Whether the shared secret is all zeros (a low-order point), in constant time.
    private static func isZero(_ shared: SharedSecret) -> Bool {
        shared.withUnsafeBytes { sodium_is_zero($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) == 1 }
    }
}
