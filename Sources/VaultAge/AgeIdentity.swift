import VaultCrypto

/// What opens an age file: an X25519 secret key (`AGE-SECRET-KEY-1…`) or a passphrase.
///
/// ```swift
/// let key = try AgeIdentity.x25519(secretKey: keyFileLine)      // SecureBytes "AGE-SECRET-KEY-1…"
/// let passphrase = AgeIdentity.scrypt(passphrase: typed)
/// let fresh = AgeIdentity.generateX25519()
/// print(fresh.recipient!)                                        // age1…, safe to share
/// ```
///
/// The secret text is read from ``SecureBytes`` and never becomes a `String`; the decoded scalar is
/// used by libsodium straight from there, and the buffers in between are wiped.
/// ``description`` never shows the secret.
public struct AgeIdentity: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        /// The 32-byte scalar, in secure memory.
        case x25519(SecureBytes)
        case scrypt(passphrase: SecureBytes)
    }

    let kind: Kind

    static let secretKeyHRP = "AGE-SECRET-KEY-"

    /// An X25519 identity from its Bech32 text, `AGE-SECRET-KEY-1…` in upper case (surrounding
    /// spaces and line ends are not accepted). Throws ``AgeError/Code/invalidIdentity``.
    public static func x25519(secretKey text: SecureBytes) throws -> AgeIdentity {
        guard let decoded = text.withUnsafeBytes({ Bech32.decode($0) }) else {
            throw AgeError(.invalidIdentity, "not an X25519 identity: the text is not valid Bech32")
        }
        var scalar = decoded.data
        defer { wipe(&scalar) }
        guard decoded.hrp == secretKeyHRP, scalar.count == 32 else {
            throw AgeError(.invalidIdentity, "not an X25519 identity: expected \"AGE-SECRET-KEY-1\" and a 32-byte key")
        }
        return AgeIdentity(kind: .x25519(SecureBytes(copying: scalar)))
    }

    /// A passphrase identity.
    public static func scrypt(passphrase: SecureBytes) -> AgeIdentity {
        AgeIdentity(kind: .scrypt(passphrase: passphrase))
    }

    /// A new X25519 identity from the CSPRNG.
    public static func generateX25519() -> AgeIdentity {
        AgeIdentity(kind: .x25519(SecureBytes(randomCount: 32)))
    }

    /// The recipient that seals files for this identity; nil for a passphrase.
    public var recipient: AgeRecipient? {
        guard case let .x25519(scalar) = kind else { return nil }
        return AgeRecipient(kind: .x25519(Self.publicKey(of: scalar)))
    }

    /// The `AGE-SECRET-KEY-1…` text of an X25519 identity in secure memory, as `age-keygen` writes
    /// it (without the line end); nil for a passphrase. Write it out and let it go.
    public func secretKeyText() -> SecureBytes? {
        guard case let .x25519(scalar) = kind else { return nil }
        var text = scalar.withUnsafeBytes { Bech32.encode(hrp: Self.secretKeyHRP, data: $0) }
        defer { wipe(&text) }
        return SecureBytes(copying: text)
    }

    /// For logs: `X25519 identity for age1…` or `passphrase`. Never the secret.
    public var description: String {
        switch kind {
        case let .x25519(scalar): return "X25519 identity for \(AgeRecipient.text(of: Self.publicKey(of: scalar)))"
        case .scrypt: return "passphrase"
        }
    }

    /// The file key from the first stanza this identity opens; nil when none is addressed to it.
    func unwrap(_ stanzas: [AgeStanza], maximumWorkFactor: Int) throws -> SecureBytes? {
        var publicKey: [UInt8] = []
        if case let .x25519(scalar) = kind { publicKey = Self.publicKey(of: scalar) }
        for stanza in stanzas {
            let fileKey: SecureBytes?
            switch kind {
            case let .x25519(scalar): fileKey = try X25519Stanza.unwrap(stanza, with: scalar, publicKey: publicKey)
            case let .scrypt(passphrase):
                fileKey = try ScryptStanza.unwrap(stanza, passphrase: passphrase, maximumWorkFactor: maximumWorkFactor)
            }
            if let fileKey { return fileKey }
        }
        return nil
    }

    static func publicKey(of scalar: SecureBytes) -> [UInt8] {
        AgeKeyDerivation.publicKey(of: scalar)
    }
}
