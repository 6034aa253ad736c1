import CSodium
import VaultCrypto

/// The primitives age's keys need besides the AEAD and scrypt, all from libsodium: HMAC-SHA-256,
/// HKDF-SHA-256 (RFC 5869) for 32-byte keys, and X25519. Every key they make lives in
/// ``SecureBytes``.
///
/// ```swift
/// let key = AgeKeyDerivation.hkdf(secret: fileKey, salt: [], info: Array("header".utf8))
/// let mac = key.withUnsafeBytes { AgeKeyDerivation.hmac(key: $0, message: header) }
/// ```
enum AgeKeyDerivation {
    static let keyCount = 32

    /// HMAC-SHA-256 of `message` under `key` (of any length, as HMAC allows).
    static func hmac(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        hmac(key: key, message: message, into: &mac)
        return mac
    }

    private static func hmac(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, suffix: UInt8? = nil,
                             into output: UnsafeMutablePointer<UInt8>) {
        sodiumReady()
        var state = crypto_auth_hmacsha256_state()
        defer { withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) } }
        // An empty buffer may have no address; libsodium reads no byte of a zero-length one.
        withUnsafePointer(to: UInt8(0)) { none in
            crypto_auth_hmacsha256_init(&state, key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? none, key.count)
            crypto_auth_hmacsha256_update(&state, message.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? none, UInt64(message.count))
        }
        if var suffix { crypto_auth_hmacsha256_update(&state, &suffix, 1) }
        crypto_auth_hmacsha256_final(&state, output)
    }

    /// HKDF-SHA-256 of `secret` with `salt` and `info`, 32 bytes: one block, T(1) = HMAC(PRK, info ‖ 0x01).
    /// An empty salt is HMAC's zero-padded key, the RFC's "string of HashLen zeros".
    static func hkdf(secret: UnsafeRawBufferPointer, salt: [UInt8], info: [UInt8]) -> SecureBytes {
        let pseudorandomKey = SecureBytes(count: keyCount) { prk in
            salt.withUnsafeBytes { saltRaw in
                hmac(key: saltRaw, message: secret, into: prk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return SecureBytes(count: keyCount) { okm in
            pseudorandomKey.withUnsafeBytes { prk in
                info.withUnsafeBytes { infoRaw in
                    hmac(key: prk, message: infoRaw, suffix: 1, into: okm.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
    }

    static func hkdf(secret: SecureBytes, salt: [UInt8], info: [UInt8]) -> SecureBytes {
        secret.withUnsafeBytes { hkdf(secret: $0, salt: salt, info: info) }
    }

    /// The X25519 public key of `scalar` (clamped, as X25519 does with any 32 bytes).
    static func publicKey(of scalar: SecureBytes) -> [UInt8] {
        sodiumReady()
        var point = [UInt8](repeating: 0, count: keyCount)
        _ = scalar.withUnsafeBytes { crypto_scalarmult_curve25519_base(&point, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        return point
    }

    /// X25519(`scalar`, `point`); nil when the result is all zeros (a low-order point), which
    /// anyone could compute.
    static func sharedSecret(_ scalar: SecureBytes, _ point: [UInt8]) -> SecureBytes? {
        precondition(point.count == keyCount)
        sodiumReady()
        var failed = false
        let shared = SecureBytes(count: keyCount) { out in
            scalar.withUnsafeBytes { scalarRaw in
                failed = crypto_scalarmult_curve25519(out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                      scalarRaw.baseAddress!.assumingMemoryBound(to: UInt8.self), point) != 0
            }
        }
        return failed ? nil : shared
    }
}
