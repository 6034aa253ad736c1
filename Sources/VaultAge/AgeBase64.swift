/// The base64 of age (RFC 4648 §4, standard alphabet): unpadded in headers, padded in armor, and
/// strict in both: a decoder refuses any byte outside the alphabet (CR and LF included), `=` where
/// it is not allowed, and non-canonical encodings (unused low bits that are not zero), so each
/// value has exactly one text and the header MAC covers what the parser read.
enum AgeBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Base64 text (ASCII bytes) of `bytes`, with or without `=` padding.
    static func encode(_ bytes: UnsafeRawBufferPointer, padded: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let left = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = left > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = left > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            let characters = min(left, 3) + 1
            for position in 0..<4 {
                if position < characters {
                    out.append(alphabet[Int((group >> UInt32(18 - 6 * position)) & 0x3F)])
                } else if padded {
                    out.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return out
    }

    static func encode(_ bytes: [UInt8], padded: Bool = false) -> [UInt8] {
        bytes.withUnsafeBytes { encode($0, padded: padded) }
    }

    /// Decodes canonical unpadded base64; nil for anything else.
    static func decode<Text: Collection>(_ text: Text) -> [UInt8]? where Text.Element == UInt8 {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Canonical: the bits left over from the last character are zero.
        guard accumulator == 0 else { return nil }
        return out
    }

    /// Decodes canonical padded base64 (length a multiple of 4, `=` only as the last one or two
    /// characters, where unpadded text would end); nil for anything else.
    static func decodePadded<Text: BidirectionalCollection>(_ text: Text) -> [UInt8]? where Text.Element == UInt8 {
        guard text.count % 4 == 0 else { return nil }
        var body = text[...]
        var padding = 0
        while padding < 2, body.last == UInt8(ascii: "=") {
            body = body.dropLast()
            padding += 1
        }
        // Two `=` need a length of 2 mod 4 before them, one `=` a length of 3 mod 4.
        guard padding == 0 || body.count % 4 == 4 - padding else { return nil }
        return decode(body)
    }
}
