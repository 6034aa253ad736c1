import VaultCrypto

/// One line of a file: its text without the line break, and the whole line with it (what dropping
/// the line removes).
struct LineSpan {
    let number: Int
    let content: Range<Int>
    let full: Range<Int>
}

/// Byte-level helpers the parsers share: they read secrets from raw memory, so no line of a file
/// becomes a `String` unless it is known to hold none.
enum ByteText {
    /// The bytes `produce` hands out (it runs twice: once to count, once to fill), straight into
    /// secure memory: an unescaped secret never sits in an ordinary buffer.
    static func secureBytes(_ produce: ((UInt8) -> Void) -> Void) -> SecureBytes {
        var count = 0
        produce { _ in count += 1 }
        return SecureBytes(count: count) { out in
            var written = 0
            produce { out[written] = $0; written += 1 }
        }
    }

    /// Lines split at LF; a CR before the LF is left out of `content`. A last line without LF counts.
    static func lines(_ bytes: UnsafeRawBufferPointer) -> [LineSpan] {
        var spans: [LineSpan] = []
        var start = 0
        var number = 1
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            let next = end < bytes.count ? end + 1 : end
            var contentEnd = end
            if contentEnd > start && bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            spans.append(LineSpan(number: number, content: start..<contentEnd, full: start..<next))
            number += 1
            start = next
        }
        return spans
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
    }

    /// `range` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper && isSpace(bytes[lower]) { lower += 1 }
        while upper > lower && isSpace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// The bytes as text; nil when they are not UTF-8. Only for bytes that hold no secret.
    static func text(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String? {
        String(validating: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    static func equals(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ text: StaticString, caseInsensitive: Bool = false) -> Bool {
        let expected = UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        guard range.count == expected.count else { return false }
        for (offset, byte) in expected.enumerated() {
            let actual = bytes[range.lowerBound + offset]
            if caseInsensitive ? lower(actual) != lower(byte) : actual != byte { return false }
        }
        return true
    }

    static func lower(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }

    /// Percent-decoding as git's `url_decode` does it: `%XX` becomes the byte, a `%` not followed by
    /// two hex digits stays as it is, `+` stays `+`. Calls `put` for each decoded byte.
    static func percentDecode(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ put: (UInt8) -> Void) {
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < range.upperBound,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                put(high << 4 | low)
                index += 3
            } else {
                put(byte)
                index += 1
            }
        }
    }

    /// The percent-decoded bytes as text, for names (not secrets); nil when not UTF-8.
    static func percentDecodedText(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String? {
        var decoded: [UInt8] = []
        percentDecode(bytes, range) { decoded.append($0) }
        return String(validating: decoded, as: UTF8.self)
    }

    /// The percent-decoded bytes in secure memory, with no other copy made.
    static func percentDecodedSecret(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> SecureBytes {
        var count = 0
        percentDecode(bytes, range) { _ in count += 1 }
        return SecureBytes(count: count) { out in
            var written = 0
            percentDecode(bytes, range) { byte in
                out[written] = byte
                written += 1
            }
        }
    }

    static func secret(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> SecureBytes {
        SecureBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[range]))
    }
}

extension ByteText {
    /// The ranges' bytes joined by newlines, in secure memory: a value continued over lines, as
    /// Python's configparser joins it (an empty first line left out).
    static func joinedSecret(_ bytes: UnsafeRawBufferPointer, _ ranges: [Range<Int>]) -> SecureBytes {
        let parts = ranges.first?.isEmpty == true && ranges.count > 1 ? Array(ranges.dropFirst()) : ranges
        let count = parts.reduce(0) { $0 + $1.count } + max(0, parts.count - 1)
        return SecureBytes(count: count) { out in
            var written = 0
            for (index, range) in parts.enumerated() {
                if index > 0 { out[written] = 0x0A; written += 1 }
                for offset in range { out[written] = bytes[offset]; written += 1 }
            }
        }
    }
}
