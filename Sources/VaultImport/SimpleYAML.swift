import VaultCrypto

/// The block-mapping subset of YAML that gh writes to `hosts.yml` (gopkg.in/yaml.v3): `key: value`
/// lines nested by indentation, plain or quoted scalars on one line, `#` comments. Each entry keeps
/// its line so a rewrite can drop it.
struct SimpleYAMLEntry {
    /// The keys from the top down to this entry's own key.
    let path: [String]
    /// The scalar's bytes (inside the quotes when quoted); nil for a key that opens a mapping.
    let value: Range<Int>?
    let quote: UInt8?
    let line: LineSpan
}

enum SimpleYAML {
    static func entries(_ bytes: UnsafeRawBufferPointer, path file: String) throws -> [SimpleYAMLEntry] {
        var entries: [SimpleYAMLEntry] = []
        var stack: [(indent: Int, key: String)] = []
        for line in ByteText.lines(bytes) {
            let place = "\(file) line \(line.number)"
            var start = line.content.lowerBound
            while start < line.content.upperBound && bytes[start] == 0x20 { start += 1 }
            guard start < line.content.upperBound, bytes[start] != UInt8(ascii: "#") else { continue }
            if bytes[start] == 0x09 { throw ImportError(.malformed, "\(place): a tab in the indentation, which YAML forbids") }
            if bytes[start] == UInt8(ascii: "-") || ByteText.equals(bytes, line.content, "---") { continue }
            let indent = start - line.content.lowerBound
            guard let (key, afterKey) = self.key(bytes, start..<line.content.upperBound) else {
                throw ImportError(.malformed, "\(place): not a `key: value` line")
            }
            while let last = stack.last, last.indent >= indent { stack.removeLast() }
            let path = stack.map(\.key) + [key]
            let (value, quote) = try scalar(bytes, afterKey..<line.content.upperBound, place: place)
            entries.append(SimpleYAMLEntry(path: path, value: value, quote: quote, line: line))
            if value == nil { stack.append((indent, key)) }
            guard entries.count <= 8 * ImportLimits.maximumEntries else {
                throw ImportError(.tooManyEntries, "\(file): more than \(8 * ImportLimits.maximumEntries) lines")
            }
        }
        return entries
    }

    /// The key before `: ` (or a final `:`), and the offset after the colon.
    static func key(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> (String, Int)? {
        var index = range.lowerBound
        if bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
            let quote = bytes[index]
            guard let close = ByteText.firstIndex(of: quote, in: bytes, (index + 1)..<range.upperBound),
                  close + 1 < range.upperBound, bytes[close + 1] == UInt8(ascii: ":"),
                  let text = ByteText.text(bytes, (index + 1)..<close) else { return nil }
            return (text, close + 2)
        }
        while index < range.upperBound {
            if bytes[index] == UInt8(ascii: ":") && (index + 1 == range.upperBound || ByteText.isSpace(bytes[index + 1])) {
                guard let text = ByteText.text(bytes, ByteText.trimmed(bytes, range.lowerBound..<index)) else { return nil }
                return (text, index + 1)
            }
            index += 1
        }
        return nil
    }

    /// The scalar after the colon: nil when there is none (a mapping follows, or a null).
    static func scalar(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, place: String) throws -> (Range<Int>?, UInt8?) {
        let trimmed = ByteText.trimmed(bytes, range)
        guard !trimmed.isEmpty, bytes[trimmed.lowerBound] != UInt8(ascii: "#") else { return (nil, nil) }
        let first = bytes[trimmed.lowerBound]
        if first == UInt8(ascii: "\"") || first == UInt8(ascii: "'") {
            var index = trimmed.lowerBound + 1
            while index < trimmed.upperBound {
                if bytes[index] == first {
                    // '' inside single quotes is one quote
                    if first == UInt8(ascii: "'"), index + 1 < trimmed.upperBound, bytes[index + 1] == first { index += 2; continue }
                    return ((trimmed.lowerBound + 1)..<index, first)
                }
                index += first == UInt8(ascii: "\"") && bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            throw ImportError(.malformed, "\(place): a quoted value is not closed on its line")
        }
        // A plain scalar ends before ` #`.
        var end = trimmed.lowerBound
        while end < trimmed.upperBound {
            if bytes[end] == UInt8(ascii: "#") && ByteText.isSpace(bytes[end - 1]) { break }
            end += 1
        }
        return (ByteText.trimmed(bytes, trimmed.lowerBound..<end), nil)
    }

    static func text(_ bytes: UnsafeRawBufferPointer, _ entry: SimpleYAMLEntry) -> String? {
        guard let value = entry.value else { return nil }
        return secret(bytes, value, quote: entry.quote).withUnsafeBytes { String(validating: $0, as: UTF8.self) }
    }

    /// The scalar's value: `''` in single quotes is `'`; `\"`, `\\`, `\n`, `\t` in double quotes.
    static func secret(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, quote: UInt8?) -> SecureBytes {
        guard let quote else { return ByteText.secret(bytes, range) }
        func decode(_ put: (UInt8) -> Void) {
            var index = range.lowerBound
            while index < range.upperBound {
                var byte = bytes[index]
                if quote == UInt8(ascii: "'") && byte == quote {
                    index += 1
                } else if quote == UInt8(ascii: "\"") && byte == UInt8(ascii: "\\") && index + 1 < range.upperBound {
                    index += 1
                    switch bytes[index] {
                    case UInt8(ascii: "n"): byte = 0x0A
                    case UInt8(ascii: "t"): byte = 0x09
                    default: byte = bytes[index]
                    }
                }
                put(byte)
                index += 1
            }
        }
        return ByteText.secureBytes(decode)
    }
}
