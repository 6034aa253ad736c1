import CSodium

/// Authenticated encryption with libsodium's `crypto_secretbox` (XSalsa20-Poly1305).
///
/// ```swift
/// let sealed = try SecretBox.seal(message, key: key)   // nonce ‖ tag ‖ ciphertext
/// let opened = try SecretBox.open(sealed, key: key)
/// ```
///
/// Every `seal` draws a fresh random 24-byte nonce, which is safe for random nonces at this size.
/// Never reuse a key across purposes: derive one per purpose with ``KeyedHash``.
public enum SecretBox {
    public static let keyCount = Int(crypto_secretbox_KEYBYTES)
    public static let nonceCount = Int(crypto_secretbox_NONCEBYTES)
    public static let tagCount = Int(crypto_secretbox_MACBYTES)
    /// Bytes that `seal` adds to a message.
    public static let overhead = nonceCount + tagCount

    /// Encrypts `message` under `key` with a fresh random nonce; returns `nonce ‖ tag ‖ ciphertext`.
    public static func seal(_ message: UnsafeRawBufferPointer, key: SecureBytes) throws -> [UInt8] {
        try checkKey(key)
        ensureSodium()
        var out = [UInt8](repeating: 0, count: overhead + message.count)
        out.withUnsafeMutableBufferPointer { outBuffer in
            let outBase = outBuffer.baseAddress!
            randombytes_buf(outBase, nonceCount)
            let messageBase = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
            key.withUnsafeBytes { keyRaw in
                _ = crypto_secretbox_easy(
                    outBase + nonceCount,
                    messageBase ?? UnsafePointer(outBase),  // any valid pointer for an empty message
                    UInt64(message.count),
                    outBase,
                    keyRaw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
        }
        return out
    }

    /// Encrypts a secret held in secure memory.
    public static func seal(_ message: SecureBytes, key: SecureBytes) throws -> [UInt8] {
        try message.withUnsafeBytes { try seal($0, key: key) }
    }

    /// Encrypts public-format bytes (for example a serialised record) under `key`.
    public static func seal(_ message: [UInt8], key: SecureBytes) throws -> [UInt8] {
        try message.withUnsafeBytes { try seal($0, key: key) }
    }

    /// Decrypts `nonce ‖ tag ‖ ciphertext` into secure memory, or throws `authenticationFailure`.
    public static func open<Bytes: ReadableBytes>(_ sealed: Bytes, key: SecureBytes) throws -> SecureBytes {
        try checkKey(key)
        ensureSodium()
        return try sealed.withUnsafeBytes { sealedRaw in
            guard sealedRaw.count >= overhead else { throw CryptoError.authenticationFailure }
            let sealedBase = sealedRaw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return try SecureBytes(count: sealedRaw.count - overhead) { plain in
                let plainBase = plain.baseAddress?.assumingMemoryBound(to: UInt8.self)
                var scratch: UInt8 = 0
                let status = key.withUnsafeBytes { keyRaw in
                    withUnsafeMutablePointer(to: &scratch) { scratchPointer in
                        crypto_secretbox_open_easy(
                            plainBase ?? scratchPointer,
                            sealedBase + nonceCount,
                            UInt64(sealedRaw.count - nonceCount),
                            sealedBase,
                            keyRaw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        )
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

/// Byte containers whose storage can be read in place.
public protocol ReadableBytes {
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: ReadableBytes where Element == UInt8 {}
extension ArraySlice: ReadableBytes where Element == UInt8 {}
extension SecureBytes: ReadableBytes {}
