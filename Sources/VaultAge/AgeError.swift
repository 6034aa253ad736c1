/// Why an age file could not be sealed or opened.
///
/// Compare by ``code``; show ``reason``. The reason names what is wrong (which line of the header,
/// which chunk of the payload) and never holds a passphrase, a key, a file key or plaintext.
///
/// ```swift
/// do { let backup = try AgeDecryptor(identities: [.scrypt(passphrase: passphrase)]).open(file) }
/// catch let error as AgeError where error.code == .wrongPassphrase { /* ask again */ }
/// catch let error as AgeError { /* refuse the file; error.reason says why */ }
/// ```
public struct AgeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a small extensible set: new codes do not break `switch`-less clients.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case malformedHeader, unsupportedVersion, headerMACMismatch
            case noIdentityMatched, wrongPassphrase, workFactorTooHigh
            case truncatedPayload, tamperedPayload, trailingData
            case malformedArmor, invalidRecipient, invalidIdentity, tooLarge
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The header does not follow the v1 grammar, exceeds a parsing bound, or has a recipient
        /// stanza that is addressed to a given identity but broken (wrong argument count, a share
        /// that is not 32 bytes, a low-order share, a body that is not 32 bytes, scrypt mixed
        /// with other stanzas).
        public static let malformedHeader = Code(.malformedHeader)
        /// The file is an age file of another version than v1.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// A file key was unwrapped but the header's MAC does not match it: the header was changed.
        public static let headerMACMismatch = Code(.headerMACMismatch)
        /// None of the given identities could unwrap any recipient stanza.
        public static let noIdentityMatched = Code(.noIdentityMatched)
        /// The file is passphrase-encrypted and the passphrase given does not unwrap it.
        public static let wrongPassphrase = Code(.wrongPassphrase)
        /// The scrypt stanza asks for a work factor above the decryptor's maximum.
        public static let workFactorTooHigh = Code(.workFactorTooHigh)
        /// The payload ends before its final chunk, or has no nonce.
        public static let truncatedPayload = Code(.truncatedPayload)
        /// A payload chunk does not authenticate, or a non-final chunk is empty.
        public static let tamperedPayload = Code(.tamperedPayload)
        /// Bytes follow the final chunk.
        public static let trailingData = Code(.trailingData)
        /// The ASCII armor is not strict PEM with canonical base64.
        public static let malformedArmor = Code(.malformedArmor)
        /// A recipient (an `age1…` string or a work factor) is not usable for sealing.
        public static let invalidRecipient = Code(.invalidRecipient)
        /// An identity (an `AGE-SECRET-KEY-1…` string) is not a valid X25519 identity.
        public static let invalidIdentity = Code(.invalidIdentity)
        /// The input exceeds what this build seals or opens in memory.
        public static let tooLarge = Code(.tooLarge)

        /// A stable, machine-readable name such as `headerMACMismatch`.
        public var name: String { value.rawValue }
        public var description: String { value.rawValue }
    }

    public let code: Code
    /// What is wrong, in words safe to log.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "age: \(reason)" }

    public static func == (lhs: AgeError, rhs: AgeError) -> Bool { lhs.code == rhs.code }
}

extension AgeError {
    static func header(_ what: String) -> AgeError {
        AgeError(.malformedHeader, "malformed age header: \(what)")
    }
}
