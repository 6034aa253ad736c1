import VaultCore
import VaultCrypto

/// The query of the redirect an authorization server sends the browser back with (RFC 6749
/// §4.1.2: `code` and `state`, or §4.1.2.1: `error`, `error_description`, `state`; RFC 9207: `iss`),
/// parsed from the bytes the caller passed, bounded and strict.
///
/// ```swift
/// let callback = try AuthorizationCallback(query: callbackQuery)   // "code=…&state=…"
/// guard callback.hasState(pending.state) else { … }
/// ```
///
/// The code and state stay in secure memory; `error` is kept only as printable ASCII (it is shown to
/// the user). A parameter that appears twice, a malformed percent escape, more than
/// ``maximumParameters`` parameters or more than ``maximumBytes`` bytes is refused: a callback
/// that two readers could read two ways is not accepted. Unknown parameters (`session_state`,
/// `scope`…) are skipped.
public struct AuthorizationCallback: Sendable {
    public static let maximumBytes = 8 * 1024
    public static let maximumParameters = 32

    public let code: SecureBytes?
    public let state: SecureBytes?
    /// The provider's error code (`access_denied`…), when it sent one instead of a code.
    public let error: String?
    public let errorDescription: String?
    /// RFC 9207's `iss`: the issuer that answered.
    public let issuer: String?

    /// Parses `query` (the part after `?`, without a fragment).
    public init(query: SecureBytes) throws {
        guard query.count <= Self.maximumBytes else {
            throw VaultError.invalidArgument("the callback's query is longer than \(Self.maximumBytes) bytes")
        }
        var values: [String: SecureBytes] = [:]
        var parameters = 0
        try query.withUnsafeBytes { raw in
            var start = 0
            while start <= raw.count {
                var end = start
                while end < raw.count && raw[end] != UInt8(ascii: "&") { end += 1 }
                if end > start {
                    parameters += 1
                    guard parameters <= Self.maximumParameters else {
                        throw VaultError.invalidArgument("the callback has more than \(Self.maximumParameters) parameters")
                    }
                    let pair = UnsafeRawBufferPointer(rebasing: raw[start..<end])
                    let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.count
                    let name = try Self.decoded(UnsafeRawBufferPointer(rebasing: pair[0..<equals]))
                    let nameText = name.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                    if Self.known.contains(nameText) {
                        guard values[nameText] == nil else {
                            throw VaultError.invalidArgument("the callback carries `\(nameText)` twice; it is not a provider's answer")
                        }
                        let valueStart = Swift.min(equals + 1, pair.count)
                        values[nameText] = try Self.decoded(UnsafeRawBufferPointer(rebasing: pair[valueStart..<pair.count]))
                    }
                }
                start = end + 1
            }
        }
        code = values["code"]
        state = values["state"]
        error = Self.printable(values["error"], max: 128)
        errorDescription = Self.printable(values["error_description"], max: 512)
        issuer = Self.printable(values["iss"], max: SecureEndpoint.maximumBytes)
        if values["error"] != nil && error == nil {
            throw VaultError.invalidArgument("the callback's `error` is not a printable code")
        }
    }

    /// Whether the callback's state is `expected`, compared in constant time.
    public func hasState(_ expected: SecureBytes) -> Bool {
        guard let state else { return false }
        return state == expected  // SecureBytes' == is sodium_memcmp: constant time
    }

    private static let known: Set<String> = ["code", "state", "error", "error_description", "iss"]

    /// Percent-decodes (`+` is a space, as forms write it) into secure memory; a `%` not followed
    /// by two hex digits is refused.
    static func decoded(_ raw: UnsafeRawBufferPointer) throws -> SecureBytes {
        var length = 0
        var index = 0
        while index < raw.count {
            if raw[index] == UInt8(ascii: "%") {
                guard index + 2 < raw.count, HexDigit.value(of: raw[index + 1]) != nil, HexDigit.value(of: raw[index + 2]) != nil else {
                    throw VaultError.invalidArgument("the callback has a malformed percent escape")
                }
                index += 3
            } else {
                index += 1
            }
            length += 1
        }
        return SecureBytes(count: length) { out in
            var read = 0
            var written = 0
            while read < raw.count {
                let byte = raw[read]
                if byte == UInt8(ascii: "%") {
                    out[written] = HexDigit.value(of: raw[read + 1])! << 4 | HexDigit.value(of: raw[read + 2])!
                    read += 3
                } else {
                    out[written] = byte == UInt8(ascii: "+") ? 0x20 : byte
                    read += 1
                }
                written += 1
            }
        }
    }

    /// The value as text when it is printable ASCII of at most `max` bytes.
    private static func printable(_ value: SecureBytes?, max: Int) -> String? {
        guard let value, value.count > 0, value.count <= max else { return nil }
        return value.withUnsafeBytes { raw in
            raw.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) ? String(decoding: raw, as: UTF8.self) : nil
        }
    }
}
