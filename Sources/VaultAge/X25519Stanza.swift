import VaultCrypto

/// The X25519 recipient stanza: `-> X25519 <ephemeral share>` and the file key sealed under
/// HKDF-SHA-256(shared secret, salt = share ‖ recipient, info "age-encryption.org/v1/X25519").
enum X25519Stanza {
    static let type = "X25519"
    static let info = Array("age-encryption.org/v1/X25519".utf8)

    /// Wraps `fileKey` for the recipient's public key, with a fresh ephemeral key.
    static func wrap(_ fileKey: SecureBytes, to recipient: [UInt8]) throws -> AgeStanza {
        let ephemeral = SecureBytes(randomCount: AgeKeyDerivation.keyCount)
        let share = AgeKeyDerivation.publicKey(of: ephemeral)
        // A low-order recipient key gives a zero secret that anyone can compute: refuse it, as age does.
        guard let shared = AgeKeyDerivation.sharedSecret(ephemeral, recipient) else {
            throw AgeError(.invalidRecipient, "the X25519 recipient is a low-order point, which would seal for anyone")
        }
        let wrapKey = AgeKeyDerivation.hkdf(secret: shared, salt: share + recipient, info: info)
        let body = wrapKey.withUnsafeBytes { ChaCha20Poly1305.wrapFileKey(fileKey, key: $0) }
        return AgeStanza(type: type, arguments: [String(decoding: AgeBase64.encode(share), as: UTF8.self)], body: body)
    }

    /// The file key, or nil when the stanza is not an X25519 stanza or was sealed for another key.
    /// Throws ``AgeError/Code/malformedHeader`` for an X25519 stanza that is broken: not exactly one
    /// argument, a share that is not canonical base64 of 32 bytes, a body that is not 32 bytes (checked
    /// before decrypting, against partitioning oracles), or a low-order share (all-zero secret).
    static func unwrap(_ stanza: AgeStanza, with scalar: SecureBytes, publicKey: [UInt8]) throws -> SecureBytes? {
        guard stanza.type == type else { return nil }
        guard stanza.arguments.count == 1 else {
            throw AgeError.header("an X25519 stanza has \(stanza.arguments.count + 1) arguments instead of 2")
        }
        guard let share = AgeBase64.decode(Array(stanza.arguments[0].utf8)), share.count == AgeKeyDerivation.keyCount else {
            throw AgeError.header("an X25519 stanza's share is not canonical base64 of 32 bytes")
        }
        guard stanza.body.count == AgeFileKey.count + ChaCha20Poly1305.tagCount else {
            throw AgeError.header("an X25519 stanza's body is \(stanza.body.count) bytes instead of 32")
        }
        guard let shared = AgeKeyDerivation.sharedSecret(scalar, share) else {
            throw AgeError.header("an X25519 stanza's share is a low-order point (the shared secret is zero)")
        }
        let wrapKey = AgeKeyDerivation.hkdf(secret: shared, salt: share + publicKey, info: info)
        return wrapKey.withUnsafeBytes { ChaCha20Poly1305.unwrapFileKey(stanza.body, key: $0) }
    }
}
