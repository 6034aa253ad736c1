import CSodium
import VaultCrypto

/// ChaCha20-Poly1305 as RFC 7539 and age define it (`crypto_aead_chacha20poly1305_ietf`: 12-byte
/// nonce, 16-byte tag, no associated data), run by libsodium rather than swift-crypto's `ChaChaPoly`
/// because libsodium writes the plaintext straight into the caller's buffer: a file key or a
/// payload chunk goes into secure memory without passing through a `Data` on the ordinary heap.
enum ChaCha20Poly1305 {
    static let keyCount = 32
    static let nonceCount = 12
    static let tagCount = 16

    /// Encrypts `message` into `out` (`message.count + tagCount` bytes).
    static func seal(_ message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: [UInt8],
                     into out: UnsafeMutableRawBufferPointer) {
        precondition(key.count == keyCount && nonce.count == nonceCount && out.count == message.count + tagCount)
        sodiumReady()
        var empty: UInt8 = 0
        withUnsafePointer(to: &empty) { emptyPointer in
            _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                message.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, UInt64(message.count),
                nil, 0, nil, nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Verifies and decrypts `sealed` into `out` (`sealed.count - tagCount` bytes); false, with `out`
    /// untouched, when the tag does not verify.
    static func open(_ sealed: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: [UInt8],
                     into out: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(key.count == keyCount && nonce.count == nonceCount)
        guard sealed.count >= tagCount, out.count == sealed.count - tagCount else { return false }
        sodiumReady()
        var scratch: UInt8 = 0
        return withUnsafeMutablePointer(to: &scratch) { scratchPointer in
            crypto_aead_chacha20poly1305_ietf_decrypt(
                out.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? scratchPointer, nil, nil,
                sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count),
                nil, 0, nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// Unwraps a 16-byte file key from a stanza body (nonce of twelve zero bytes) into secure
    /// memory; nil when it does not authenticate. The caller has checked the body is 32 bytes.
    static func unwrapFileKey(_ body: [UInt8], key: UnsafeRawBufferPointer) -> SecureBytes? {
        precondition(body.count == AgeFileKey.count + tagCount)
        var opened = false
        let fileKey = SecureBytes(count: AgeFileKey.count) { out in
            opened = body.withUnsafeBytes { open($0, key: key, nonce: zeroNonce, into: out) }
        }
        return opened ? fileKey : nil
    }

    /// Wraps a file key into a 32-byte stanza body.
    static func wrapFileKey(_ fileKey: SecureBytes, key: UnsafeRawBufferPointer) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: fileKey.count + tagCount)
        fileKey.withUnsafeBytes { raw in
            body.withUnsafeMutableBytes { seal(raw, key: key, nonce: zeroNonce, into: $0) }
        }
        return body
    }

    static let zeroNonce = [UInt8](repeating: 0, count: nonceCount)
}

/// libsodium's initialisation (idempotent, thread-safe); VaultCrypto does the same for its own calls.
private let sodiumInitialized: Bool = sodium_init() >= 0

func sodiumReady() {
    precondition(sodiumInitialized, "libsodium failed to initialise")
}

/// Zeroes an array that held secret bytes (a decoded key, a bech32 scratch) before it is released.
func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress { sodium_memzero(base, raw.count) }
    }
}
