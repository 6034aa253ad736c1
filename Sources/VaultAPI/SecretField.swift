import VaultCrypto

/// One secret parameter as received: decoded from the frame's base64 straight into secure memory,
/// or the reason it could not be (never its text).
public enum SecretField: Sendable {
    case bytes(SecureBytes)
    case invalid(String)

    /// Decodes the raw base64 bytes of a JSON string (between its quotes), refusing more than
    /// `maxBytes` decoded bytes before allocating anything.
    public static func decode(_ raw: UnsafeRawBufferPointer, maxBytes: Int) -> SecretField {
        guard raw.count <= (maxBytes + 2) / 3 * 4 else { return .invalid("is over the \(limitText(maxBytes)) limit") }
        guard let bytes = SecureBytes(base64Encoded: raw) else { return .invalid("is not valid base64") }
        guard bytes.count <= maxBytes else { return .invalid("is over the \(limitText(maxBytes)) limit") }
        return .bytes(bytes)
    }

    static func limitText(_ bytes: Int) -> String {
        bytes % 1024 == 0 && bytes >= 64 * 1024 ? "\(bytes / 1024) KiB" : "\(bytes)-byte"
    }
}

/// The secret parameters of a message, by dotted path below `parameters` (`secret`,
/// `provider.clientSecret`), with the most bytes each may decode to.
public struct SecretLimits: Sendable, Equatable {
    public let limits: [String: Int]

    public init(_ limits: [String: Int]) { self.limits = limits }

    public static let none = SecretLimits([:])

    /// The same paths under the message's `parameters` member, as the frame parser matches them.
    public var messagePaths: Set<String> { Set(limits.keys.map { "parameters." + $0 }) }

    public func merging(_ other: SecretLimits) -> SecretLimits {
        SecretLimits(limits.merging(other.limits) { max($0, $1) })
    }
}
