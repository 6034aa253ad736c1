import BoundedJSON
import VaultCrypto

/// The provider's own words for an error, made safe to show: printable ASCII, bounded, and withheld
/// when they contain a credential the request carried, in any common encoding (a provider that
/// echoes its input must not put a token, a client secret or a key into our error text, and from
/// there into the daemon's log).
///
/// ```swift
/// let text = ProviderErrorText(sent: [refreshToken, clientSecret])
/// text.clean(object["error_description"]?.stringValue)   // nil, the text, or a "withheld" notice
/// ```
///
/// The encodings looked for: the raw bytes; percent-encoded (any case, `+` for a space), found by
/// decoding the text; JSON-escaped (`\/`, `\"`, `\uXXXX`), found by unescaping it; and base64 in
/// both alphabets, alone or inside a longer base64 run (a Basic authorization header echoed back),
/// found by encoding the secret at each of the three byte alignments.
struct ProviderErrorText {
    /// The secrets of the request the answer is about.
    let sent: [SecureBytes]

    static let withheld = "(the provider's error text contained a credential and was withheld)"

    /// `text` if it is printable, at most `max` bytes and holds none of the sent secrets in any
    /// encoding above; the withheld notice when it holds one; nil when it is not fit to show.
    func clean(_ text: String?, max: Int = 512) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= max, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let raw = Array(text.utf8)
        let haystacks = [raw, Self.percentDecoded(raw), Self.jsonUnescaped(raw), Self.jsonUnescaped(Self.percentDecoded(raw))]
        for secret in sent where secret.count >= 4 {
            let found = secret.withUnsafeBytes { bytes -> Bool in
                // Short-lived plain copies of the secret and its encodings, wiped before returning.
                var needle = Array(bytes)
                var cores = Self.base64Cores(of: needle)
                defer {
                    Self.wipe(&needle)
                    for index in cores.indices { Self.wipe(&cores[index]) }
                }
                if haystacks.contains(where: { Self.contains($0, needle) }) { return true }
                return cores.contains { core in Self.contains(raw, core) }
            }
            if found { return Self.withheld }
        }
        return text
    }

    /// The answer's JSON object, if it is one.
    static func object(_ body: SecureBytes) -> [String: JSONValue]? {
        body.withUnsafeBytes { raw in
            guard case .object(let object)? = try? JSONValue.parse(raw, maxDepth: 8) else { return nil }
            return object
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if (1..<needle.count).allSatisfy({ haystack[start + $0] == needle[$0] }) { return true }
        }
        return false
    }

    /// `bytes` with every escape that `decode` recognises at an index replaced by what it stands
    /// for (`decode` gives those bytes and the escape's length, or nil); other bytes kept.
    static func unescaped(_ bytes: [UInt8], _ decode: (_ index: Int) -> (bytes: [UInt8], length: Int)?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if let escape = decode(index) {
                out.append(contentsOf: escape.bytes)
                index += escape.length
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// `%XX` (either case) decoded and `+` read as a space; anything else kept.
    static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
        unescaped(bytes) { index in
            if bytes[index] == UInt8(ascii: "+") { return ([UInt8(ascii: " ")], 1) }
            guard bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                  let high = HexDigit.value(of: bytes[index + 1]), let low = HexDigit.value(of: bytes[index + 2]) else { return nil }
            return ([high << 4 | low], 3)
        }
    }

    /// JSON string escapes undone (`\/`, `\"`, `\\`, `\b\f\n\r\t`, `\uXXXX` as UTF-8); anything else kept.
    static func jsonUnescaped(_ bytes: [UInt8]) -> [UInt8] {
        unescaped(bytes) { index in
            guard bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count else { return nil }
            let next = bytes[index + 1]
            switch next {
            case UInt8(ascii: "u") where index + 5 < bytes.count:
                let digits = bytes[(index + 2)...(index + 5)].map(HexDigit.value(of:))
                if digits.allSatisfy({ $0 != nil }), let scalar = Unicode.Scalar(digits.reduce(UInt32(0)) { $0 << 4 | UInt32($1!) }) {
                    return (Array(String(Character(scalar)).utf8), 6)
                }
                return ([next], 2)
            case UInt8(ascii: "n"): return ([0x0A], 2)
            case UInt8(ascii: "t"): return ([0x09], 2)
            case UInt8(ascii: "r"): return ([0x0D], 2)
            case UInt8(ascii: "b"): return ([0x08], 2)
            case UInt8(ascii: "f"): return ([0x0C], 2)
            default: return ([next], 2)
            }
        }
    }

    /// The part of `secret`'s base64 (standard and URL-safe) that stays the same wherever the
    /// secret starts inside a longer encoded run: for each of the three byte alignments, the
    /// characters that depend on the secret's bytes alone.
    static func base64Cores(of secret: [UInt8]) -> [[UInt8]] {
        var cores: [[UInt8]] = []
        for shift in 0..<3 {
            let padded = [UInt8](repeating: 0, count: shift) + secret
            let encoded = base64(padded)
            // Characters before `lead` mix in the padding bytes; after `end`, the bytes that follow.
            let lead = (shift * 8 + 5) / 6
            let end = (padded.count * 8) / 6
            guard end - lead >= 4 else { continue }
            let core = Array(encoded[lead..<end])
            cores.append(core)
            cores.append(core.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: "-") : $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 })
        }
        return cores
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static func base64(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = (UInt32(chunk[0]) << 16) | (UInt32(chunk.count > 1 ? chunk[1] : 0) << 8) | UInt32(chunk.count > 2 ? chunk[2] : 0)
            for position in 0...chunk.count { out.append(alphabet[Int((value >> UInt32(18 - 6 * position)) & 0x3F)]) }
            index += 3
        }
        return out
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            for index in raw.indices { raw[index] = 0 }
        }
    }
}
