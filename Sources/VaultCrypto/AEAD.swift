import CSodium

/// Authenticated encryption with associated data: libsodium's `crypto_aead_xchacha20poly1305_ietf`.
///
/// ```swift
/// let sealed = try AEAD.seal(secret, key: key, associatedData: rowIdentity)   // nonce ‖ ciphertext ‖ tag
/// let opened = try AEAD.open(sealed, key: key, associatedData: rowIdentity)
/// ```
///
/// The associated data is not encrypted but is authenticated: `open` fails unless it is given exactly
/// the bytes `seal` was given. Bind there what the ciphertext belongs to (its row, generation and key
/// id), so a ciphertext moved elsewhere does not open. Every `seal` draws a fresh random 24-byte nonce,
/// safe at this nonce size. Never reuse a key across purposes: derive one per purpose with ``KeyedHash``.
public enum AEAD {
    public static let keyCount = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    public static let nonceCount = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    public static let tagCount = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    /// Bytes that `seal` adds to a message.
    public static let overhead = nonceCount + tagCount

    /// Encrypts `message` under `key`, authenticating `associatedData`; returns `nonce ‖ ciphertext ‖ tag`.
    public static func seal(_ message: UnsafeRawBufferPointer, key: SecureBytes, associatedData: [UInt8]) throws -> [UInt8] {
        try checkKey(key)
        ensureSodium()
        var out = [UInt8](repeating: 0, count: overhead + message.count)
        out.withUnsafeMutableBufferPointer { outBuffer in
            let outBase = outBuffer.baseAddress!
            randombytes_buf(outBase, nonceCount)
            let messageBase = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
            key.withUnsafeBytes { keyRaw in
                associatedData.withUnsafeBufferPointer { ad in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        outBase + nonceCount, nil,
                        messageBase ?? UnsafePointer(outBase),  // any valid pointer for an empty message
                        UInt64(message.count),
                        ad.baseAddress, UInt64(ad.count),
                        nil, outBase,
                        keyRaw.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return out
    }

    /// Encrypts a secret held in secure memory.
    public static func seal(_ message: SecureBytes, key: SecureBytes, associatedData: [UInt8]) throws -> [UInt8] {
        try message.withUnsafeBytes { try seal($0, key: key, associatedData: associatedData) }
    }

    /// Decrypts `nonce ‖ ciphertext ‖ tag` into secure memory, or throws `authenticationFailure` when
    /// the key, the associated data or any byte differs from what was sealed.
    public static func open<Bytes: ReadableBytes>(_ sealed: Bytes, key: SecureBytes, associatedData: [UInt8]) throws -> SecureBytes {
        try checkKey(key)
        ensureSodium()
        return try sealed.withUnsafeBytes { sealedRaw in
            guard sealedRaw.count >= overhead else { throw CryptoError.authenticationFailure }
            let sealedBase = sealedRaw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return try SecureBytes(count: sealedRaw.count - overhead) { plain in
                let plainBase = plain.baseAddress?.assumingMemoryBound(to: UInt8.self)
                var scratch: UInt8 = 0
                let status = key.withUnsafeBytes { keyRaw in
                    associatedData.withUnsafeBufferPointer { ad in
                        withUnsafeMutablePointer(to: &scratch) { scratchPointer in
                            crypto_aead_xchacha20poly1305_ietf_decrypt(
                                plainBase ?? scratchPointer, nil, nil,
                                sealedBase + nonceCount, UInt64(sealedRaw.count - nonceCount),
                                ad.baseAddress, UInt64(ad.count),
                                sealedBase,
                                keyRaw.baseAddress!.assumingMemoryBound(to: UInt8.self))
                        }
                    }
                }
                guard status == 0 else { throw CryptoError.authenticationFailure }
            }
        }
    }

    private static func checkKey(_ key: SecureBytes) throws {
        guard key.count == keyCount else { throw CryptoError.invalidLength(expected: keyCount, actual: key.count) }
    }
}
