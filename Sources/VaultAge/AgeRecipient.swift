import VaultCrypto

/// Whom an age file is sealed for: an X25519 public key (`age1…`) or a passphrase (scrypt).
///
/// ```swift
/// let team = try AgeRecipient.x25519("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
/// let offline = try AgeRecipient.scrypt(passphrase: passphrase)          // work factor 18
/// ```
///
/// A passphrase recipient must be the only recipient of a file (the format demands it).
/// ``description`` is safe to log: the `age1…` text, or `scrypt` and the work factor.
public struct AgeRecipient: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        /// The 32-byte public key.
        case x25519([UInt8])
        case scrypt(passphrase: SecureBytes, workFactor: Int)
    }

    let kind: Kind

    /// age's default work factor for new passphrase files: 2^18 iterations, 256 MiB, about a
    /// second on a laptop.
    public static let defaultScryptWorkFactor = 18

    /// An X25519 recipient from its Bech32 text, `age1…` in lower case. Throws
    /// ``AgeError/Code/invalidRecipient`` for anything else.
    public static func x25519(_ text: String) throws -> AgeRecipient {
        guard let (hrp, data) = Array(text.utf8).withUnsafeBytes({ Bech32.decode($0) }), hrp == "age", data.count == 32 else {
            throw AgeError(.invalidRecipient, "not an X25519 recipient: expected \"age1\" and 58 Bech32 characters")
        }
        return AgeRecipient(kind: .x25519(data))
    }

    /// A passphrase recipient. `workFactor` is log2 of scrypt's N, from 1 up to
    /// ``AgeDecryptor/defaultMaximumWorkFactor`` (so the default decryptor opens the file); pass a
    /// lower one only in tests, where the file is thrown away.
    public static func scrypt(passphrase: SecureBytes, workFactor: Int = defaultScryptWorkFactor) throws -> AgeRecipient {
        guard (1...AgeDecryptor.defaultMaximumWorkFactor).contains(workFactor) else {
            throw AgeError(.invalidRecipient,
                           "scrypt work factor \(workFactor) is outside 1...\(AgeDecryptor.defaultMaximumWorkFactor)")
        }
        return AgeRecipient(kind: .scrypt(passphrase: passphrase, workFactor: workFactor))
    }

    /// The `age1…` text of an X25519 recipient; nil for a passphrase.
    public var x25519Text: String? {
        guard case let .x25519(key) = kind else { return nil }
        return Self.text(of: key)
    }

    /// For logs: the `age1…` text, or `scrypt (work factor N)`. Never the passphrase.
    public var description: String {
        switch kind {
        case let .x25519(key): return Self.text(of: key)
        case let .scrypt(_, workFactor): return "scrypt (work factor \(workFactor))"
        }
    }

    var isScrypt: Bool {
        if case .scrypt = kind { return true }
        return false
    }

    func wrap(_ fileKey: SecureBytes) throws -> AgeStanza {
        switch kind {
        case let .x25519(key):
            return try X25519Stanza.wrap(fileKey, to: key)
        case let .scrypt(passphrase, workFactor):
            return try ScryptStanza.wrap(fileKey, passphrase: passphrase, workFactor: workFactor)
        }
    }

    static func text(of key: [UInt8]) -> String {
        String(decoding: key.withUnsafeBytes { Bech32.encode(hrp: "age", data: $0) }, as: UTF8.self)
    }
}
