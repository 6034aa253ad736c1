import Crypto
import VaultCrypto

/// The 16-byte file key of an age file and the two keys derived from it (HKDF-SHA-256): the header
/// MAC key (salt empty, info "header") and the payload key (salt = payload nonce, info "payload").
///
/// The file key lives in ``SecureBytes``; the derived keys are swift-crypto `SymmetricKey`s, whose
/// storage swift-crypto zeroes when they go, and which are used only inside one call.
enum AgeFileKey {
    static let count = 16

    /// A fresh file key from the CSPRNG; never reuse one for a second file.
    static func generate() -> SecureBytes { SecureBytes(randomCount: count) }

    /// HMAC-SHA-256 of `header` (the header through its `---` mark) under the header key.
    static func headerMAC(fileKey: SecureBytes, header: UnsafeRawBufferPointer) -> [UInt8] {
        let key = derive(fileKey: fileKey, salt: [], info: "header")
        return Array(HMAC<SHA256>.authenticationCode(for: header, using: key))
    }

    /// Whether `mac` is the header's MAC, compared in constant time.
    static func verifyHeaderMAC(_ mac: [UInt8], fileKey: SecureBytes, header: UnsafeRawBufferPointer) -> Bool {
        let key = derive(fileKey: fileKey, salt: [], info: "header")
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: header, using: key)
    }

    /// The payload key for the payload nonce `nonce`.
    static func payloadKey(fileKey: SecureBytes, nonce: [UInt8]) -> SymmetricKey {
        derive(fileKey: fileKey, salt: nonce, info: "payload")
    }

    private static func derive(fileKey: SecureBytes, salt: [UInt8], info: String) -> SymmetricKey {
        let ikm = fileKey.withUnsafeBytes { SymmetricKey(data: $0) }
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array(info.utf8), outputByteCount: 32)
    }
}
