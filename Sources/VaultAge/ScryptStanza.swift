import CSodium
import VaultCrypto

/// The scrypt recipient stanza: `-> scrypt <salt> <log2 N>` and the file key sealed under
/// scrypt(passphrase, "age-encryption.org/v1/scrypt" ‖ salt, N, r = 8, p = 1, 32 bytes).
///
/// Work factors (log2 N) cost memory and time in step: 128 · 8 · 2^N bytes, so 18 (age's default)
/// takes 256 MiB and 22 (the default maximum when opening) 4 GiB.
enum ScryptStanza {
    static let type = "scrypt"
    static let saltCount = 16
    static let label = Array("age-encryption.org/v1/scrypt".utf8)

    static func wrap(_ fileKey: SecureBytes, passphrase: SecureBytes, workFactor: Int) throws -> AgeStanza {
        let salt = SecureRandom.bytes(count: saltCount)
        let wrapKey = try deriveKey(passphrase: passphrase, salt: salt, workFactor: workFactor)
        let body = wrapKey.withUnsafeBytes { ChaCha20Poly1305.wrapFileKey(fileKey, key: $0) }
        let saltText = String(decoding: AgeBase64.encode(salt), as: UTF8.self)
        return AgeStanza(type: type, arguments: [saltText, String(workFactor)], body: body)
    }

    /// The file key, or nil when the stanza is not an scrypt stanza. Throws
    /// ``AgeError/Code/wrongPassphrase`` when the passphrase does not open it,
    /// ``AgeError/Code/workFactorTooHigh`` above `maximumWorkFactor` (before any work), and
    /// ``AgeError/Code/malformedHeader`` for a broken stanza: not exactly three arguments, a salt
    /// that is not canonical base64 of 16 bytes, a work factor not written `[1-9][0-9]*`, or a body
    /// that is not 32 bytes.
    static func unwrap(_ stanza: AgeStanza, passphrase: SecureBytes, maximumWorkFactor: Int) throws -> SecureBytes? {
        guard stanza.type == type else { return nil }
        guard stanza.arguments.count == 2 else {
            throw AgeError.header("an scrypt stanza has \(stanza.arguments.count + 1) arguments instead of 3")
        }
        guard let salt = AgeBase64.decode(Array(stanza.arguments[0].utf8)), salt.count == saltCount else {
            throw AgeError.header("an scrypt stanza's salt is not canonical base64 of 16 bytes")
        }
        let digits = Array(stanza.arguments[1].utf8)
        guard let first = digits.first, (0x31...0x39).contains(first), digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw AgeError.header("an scrypt stanza's work factor is not a decimal number without leading zeros")
        }
        guard digits.count <= 2, let workFactor = Int(stanza.arguments[1]), workFactor <= maximumWorkFactor else {
            let shown = digits.count <= 6 ? stanza.arguments[1] : "of \(digits.count) digits"
            throw AgeError(.workFactorTooHigh,
                           "the scrypt work factor \(shown) is above this decryptor's maximum of \(maximumWorkFactor)")
        }
        guard stanza.body.count == AgeFileKey.count + ChaCha20Poly1305.tagCount else {
            throw AgeError.header("an scrypt stanza's body is \(stanza.body.count) bytes instead of 32")
        }
        let wrapKey = try deriveKey(passphrase: passphrase, salt: salt, workFactor: workFactor)
        guard let fileKey = wrapKey.withUnsafeBytes({ ChaCha20Poly1305.unwrapFileKey(stanza.body, key: $0) }) else {
            throw AgeError(.wrongPassphrase, "the passphrase does not open this file")
        }
        return fileKey
    }

    private static func deriveKey(passphrase: SecureBytes, salt: [UInt8], workFactor: Int) throws -> SecureBytes {
        sodiumReady()
        let fullSalt = label + salt
        return try SecureBytes(count: 32) { out in
            var empty: UInt8 = 0
            let status = passphrase.withUnsafeBytes { pass in
                withUnsafePointer(to: &empty) { emptyPointer in
                    crypto_pwhash_scryptsalsa208sha256_ll(
                        pass.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, pass.count,
                        fullSalt, fullSalt.count, UInt64(1) << UInt64(workFactor), 8, 1,
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
                }
            }
            guard status == 0 else {
                throw AgeError(.workFactorTooHigh, "scrypt with work factor \(workFactor) could not run: not enough memory")
            }
        }
    }
}
