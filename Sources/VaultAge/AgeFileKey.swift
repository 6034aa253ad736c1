import CSodium
import VaultCrypto

/// The 16-byte file key of an age file and the two keys derived from it (HKDF-SHA-256): the header
/// MAC key (salt empty, info "header") and the payload key (salt = payload nonce, info "payload").
///
/// The file key and the keys derived from it live in ``SecureBytes``.
enum AgeFileKey {
    static let count = 16

    /// A fresh file key from the CSPRNG; never reuse one for a second file.
    static func generate() -> SecureBytes { SecureBytes(randomCount: count) }

    /// HMAC-SHA-256 of `header` (the header through its `---` mark) under the header key.
    static func headerMAC(fileKey: SecureBytes, header: UnsafeRawBufferPointer) -> [UInt8] {
        let key = derive(fileKey: fileKey, salt: [], info: "header")
        return key.withUnsafeBytes { AgeKeyDerivation.hmac(key: $0, message: header) }
    }

    /// Whether `mac` is the header's MAC, compared in constant time.
    static func verifyHeaderMAC(_ mac: [UInt8], fileKey: SecureBytes, header: UnsafeRawBufferPointer) -> Bool {
        let expected = headerMAC(fileKey: fileKey, header: header)
        return mac.count == expected.count && sodium_memcmp(mac, expected, expected.count) == 0
    }

    /// The payload key for the payload nonce `nonce`.
    static func payloadKey(fileKey: SecureBytes, nonce: [UInt8]) -> SecureBytes {
        derive(fileKey: fileKey, salt: nonce, info: "payload")
    }

    private static func derive(fileKey: SecureBytes, salt: [UInt8], info: String) -> SecureBytes {
        AgeKeyDerivation.hkdf(secret: fileKey, salt: salt, info: Array(info.utf8))
    }
}
