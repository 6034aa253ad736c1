import BoundedJSON
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

    /// Decodes the raw bytes of a JSON string that carries a secret as text (a provider's token in
    /// its own JSON answer): its escapes are resolved straight into secure memory, refusing more
    /// than `maxBytes` decoded bytes before allocating anything.
    public static func decodeText(_ raw: UnsafeRawBufferPointer, maxBytes: Int) -> SecretField {
        let count: Int
        do {
            count = try JSONValue.unescape(raw, into: nil)
        } catch {
            return .invalid("is not a valid JSON string (\(error.reason.rawValue))")
        }
        guard count <= maxBytes else { return .invalid("is over the \(limitText(maxBytes)) limit") }
        guard let bytes = try? SecureBytes(count: count, initializingWith: { _ = try JSONValue.unescape(raw, into: $0) }) else {
            return .invalid("is not a valid JSON string")
        }
        return .bytes(bytes)
    }

    static func limitText(_ bytes: Int) -> String {
        bytes % 1024 == 0 && bytes >= 64 * 1024 ? "\(bytes / 1024) KiB" : "\(bytes)-byte"
    }
}

/// The secret parameters of a message, by dotted path below `parameters` (`secret`,
/// `provider.clientSecret`), with the most bytes each may decode to.
///
/// A secret is base64 on the wire, but for the paths in `text`: those carry a provider's token as
/// the JSON string it sent (`tokenResponse.access_token` of Save), decoded with
/// ``SecretField/decodeText(_:maxBytes:)``.
public struct SecretLimits: Sendable, Equatable {
    public let limits: [String: Int]
    /// The paths whose secret is JSON text rather than base64.
    public let text: Set<String>

    public init(_ limits: [String: Int], text: [String: Int] = [:]) {
        self.limits = limits.merging(text) { max($0, $1) }
        self.text = Set(text.keys)
    }

    private init(limits: [String: Int], text: Set<String>) {
        self.limits = limits
        self.text = text
    }

    public static let none = SecretLimits([:])

    /// The secret at `path` (below `parameters`) from the raw bytes of its JSON string.
    public func decode(_ path: String, _ raw: UnsafeRawBufferPointer) -> SecretField {
        let maxBytes = limits[path] ?? 0
        return text.contains(path) ? SecretField.decodeText(raw, maxBytes: maxBytes) : SecretField.decode(raw, maxBytes: maxBytes)
    }

    /// The same paths under the message's `parameters` member, as the frame parser matches them.
    public var messagePaths: Set<String> { Set(limits.keys.map { "parameters." + $0 }) }

    /// The same paths below the member `name` (`clientSecret` → `provider.clientSecret`).
    public func under(_ name: String) -> SecretLimits {
        SecretLimits(limits: Dictionary(uniqueKeysWithValues: limits.map { (name + "." + $0.key, $0.value) }),
                     text: Set(text.map { name + "." + $0 }))
    }

    public func merging(_ other: SecretLimits) -> SecretLimits {
        SecretLimits(limits: limits.merging(other.limits) { max($0, $1) }, text: text.union(other.text))
    }
}
