import BoundedJSON
import VaultCrypto

/// Walks a JSON text without building values, so a reply's secret field can be decoded straight
/// into `SecureBytes` while everything else that is not secret goes through BoundedJSON. It checks
/// the structure it skips (strings, escapes, numbers, literals, nesting up to ``maximumDepth``) and
/// answers nil for anything malformed.
///
/// ```swift
/// let scanner = JSONScanner(bytes)
/// let parameters = scanner.member("parameters", ofObjectAt: 0)
/// ```
public struct JSONScanner {
    public let bytes: UnsafeRawBufferPointer
    public static let maximumDepth = 64

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The value range of member `name` of the object that starts at or after `start` (the last
    /// one, when a name repeats, as a dictionary would keep it); nil when absent or malformed.
    public func member(_ name: String, ofObjectAt start: Int) -> Range<Int>? {
        var found: Range<Int>?
        guard members(ofObjectAt: start, { key, value in
            if keyEquals(key, name) { found = value }
        }) else { return nil }
        return found
    }

    /// Calls `visit` with the key range (inside the quotes) and value range of each member.
    /// False when the text at `start` is not a well-formed object.
    public func members(ofObjectAt start: Int, _ visit: (Range<Int>, Range<Int>) -> Void) -> Bool {
        var i = skipSpace(start)
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return false }
        i = skipSpace(i + 1)
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { return true }
        while true {
            guard let keyEnd = skipString(i) else { return false }
            let key = (i + 1)..<(keyEnd - 1)
            i = skipSpace(keyEnd)
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
            let valueStart = skipSpace(i + 1)
            guard let valueEnd = skipValue(valueStart, depth: 1) else { return false }
            visit(key, valueStart..<valueEnd)
            i = skipSpace(valueEnd)
            guard i < bytes.count else { return false }
            if bytes[i] == UInt8(ascii: "}") { return true }
            guard bytes[i] == UInt8(ascii: ",") else { return false }
            i = skipSpace(i + 1)
        }
    }

    /// Whether the whole text is one well-formed JSON value.
    public var isWellFormed: Bool {
        guard let end = skipValue(skipSpace(0), depth: 0) else { return false }
        return skipSpace(end) == bytes.count
    }

    /// A non-secret value parsed by BoundedJSON.
    public func value(_ range: Range<Int>) -> JSONValue? {
        try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: bytes[range]), maxDepth: Self.maximumDepth)
    }

    /// A JSON string value's text, unescaped straight into secure memory (nil if not a string).
    public func secretString(_ range: Range<Int>) -> SecureBytes? {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\""), skipString(range.lowerBound) == range.upperBound else {
            return nil
        }
        return JSONStringUnescaper.unescape(UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]))
    }

    private func keyEquals(_ key: Range<Int>, _ name: String) -> Bool {
        let raw = UnsafeRawBufferPointer(rebasing: bytes[key])
        if !raw.contains(UInt8(ascii: "\\")) { return raw.elementsEqual(name.utf8) }
        guard let decoded = value((key.lowerBound - 1)..<(key.upperBound + 1))?.stringValue else { return false }
        return decoded.utf8.elementsEqual(name.utf8)
    }

    private func skipSpace(_ start: Int) -> Int {
        var i = start
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        return i
    }

    /// The index after the value at `start`.
    private func skipValue(_ start: Int, depth: Int) -> Int? {
        guard start < bytes.count, depth <= Self.maximumDepth else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return skipString(start)
        case UInt8(ascii: "{"):
            var end: Int?
            var ok = true
            var i = skipSpace(start + 1)
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { return i + 1 }
            while ok {
                guard let keyEnd = skipString(i) else { return nil }
                i = skipSpace(keyEnd)
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":"), let valueEnd = skipValue(skipSpace(i + 1), depth: depth + 1) else {
                    return nil
                }
                i = skipSpace(valueEnd)
                guard i < bytes.count else { return nil }
                if bytes[i] == UInt8(ascii: "}") { end = i + 1; break }
                ok = bytes[i] == UInt8(ascii: ",")
                i = skipSpace(i + 1)
            }
            return end
        case UInt8(ascii: "["):
            var i = skipSpace(start + 1)
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { return i + 1 }
            while true {
                guard let valueEnd = skipValue(i, depth: depth + 1) else { return nil }
                i = skipSpace(valueEnd)
                guard i < bytes.count else { return nil }
                if bytes[i] == UInt8(ascii: "]") { return i + 1 }
                guard bytes[i] == UInt8(ascii: ",") else { return nil }
                i = skipSpace(i + 1)
            }
        case UInt8(ascii: "t"): return literal("true", at: start)
        case UInt8(ascii: "f"): return literal("false", at: start)
        case UInt8(ascii: "n"): return literal("null", at: start)
        default: return skipNumber(start)
        }
    }

    private func literal(_ word: StaticString, at start: Int) -> Int? {
        let count = word.utf8CodeUnitCount
        guard start + count <= bytes.count else { return nil }
        for k in 0..<count where bytes[start + k] != word.utf8Start[k] { return nil }
        return start + count
    }

    private func skipNumber(_ start: Int) -> Int? {
        var i = start
        func digits() -> Bool {
            let from = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            return i > from
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard digits() else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") { i += 1; guard digits() else { return nil } }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() else { return nil }
        }
        return i
    }

    /// The index after the closing quote of the string at `start`.
    private func skipString(_ start: Int) -> Int? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { return nil }
        var i = start + 1
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") { return i + 1 }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                guard i + 1 < bytes.count else { return nil }
                let escaped = bytes[i + 1]
                if escaped == UInt8(ascii: "u") {
                    guard i + 5 < bytes.count, (2...5).allSatisfy({ JSONStringUnescaper.hexValue(bytes[i + $0]) != nil }) else { return nil }
                    i += 6
                    continue
                }
                guard Array(#""\/bfnrt"#.utf8).contains(escaped) else { return nil }
                i += 2
                continue
            }
            i += 1
        }
        return nil
    }
}
