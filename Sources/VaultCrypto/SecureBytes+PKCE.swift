import CSodium

/// What an OAuth2 authorization-code sign-in needs from the crypto library: unpadded base64url
/// (RFC 4648 §5, the alphabet of PKCE verifiers, state and nonces) and SHA-256 (the S256 challenge
/// of RFC 7636 §4.2), both in secure memory.
///
/// ```swift
/// let verifier = SecureBytes(randomCount: 32).base64URLEncoded()   // 43 characters
/// let challenge = verifier.sha256().base64URLEncoded()
/// ```
extension SecureBytes {
    /// Unpadded base64url of the bytes, in secure memory.
    public func base64URLEncoded() -> SecureBytes {
        ensureSodium()
        let variant = sodium_base64_VARIANT_URLSAFE_NO_PADDING
        let capacity = sodium_base64_encoded_len(count, variant)
        let scratch = SecureBytes(count: capacity) { out in
            withUnsafeBytes { raw in
                var empty: UInt8 = 0
                withUnsafePointer(to: &empty) { emptyPointer in
                    _ = sodium_bin2base64(out.baseAddress!.assumingMemoryBound(to: CChar.self), capacity,
                                          raw.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, raw.count, variant)
                }
            }
        }
        // libsodium's length counts the terminating NUL.
        return SecureBytes(count: capacity - 1) { out in
            scratch.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<(capacity - 1)])) }
        }
    }

    /// SHA-256 of the bytes (`crypto_hash_sha256`).
    public func sha256() -> SecureBytes {
        ensureSodium()
        return SecureBytes(count: Int(crypto_hash_sha256_BYTES)) { out in
            withUnsafeBytes { raw in
                var empty: UInt8 = 0
                withUnsafePointer(to: &empty) { emptyPointer in
                    _ = crypto_hash_sha256(out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                           raw.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, UInt64(raw.count))
                }
            }
        }
    }
}
