/// Writes a JSON string exactly as Go's `encoding/json` does, so our docker helper's answers are the
/// same bytes as the reference helpers' (docker-credential-helpers is Go): `<`, `>`, `&`, U+2028 and
/// U+2029 become `\u003c`-style escapes, `\n` `\r` `\t` `"` `\\` get short escapes, other control
/// bytes `\u00XX`, and each byte that is not part of well-formed UTF-8 becomes the escape `\ufffd`.
///
/// It works on raw bytes, so a secret goes from secure memory to the output buffer without ever
/// being a `String`. The caller owns (and wipes) `output`.
enum GoJSONString {
    static func append(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        output.append(UInt8(ascii: "\""))
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), byte]
                case 0x0A: output += Array("\\n".utf8)
                case 0x0D: output += Array("\\r".utf8)
                case 0x09: output += Array("\\t".utf8)
                case 0..<0x20, UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"):
                    output += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                default: output.append(byte)
                }
                index += 1
                continue
            }
            let length = validSequenceLength(bytes, at: index)
            if length == 0 {
                output += Array("\\ufffd".utf8)  // Go writes the escape, not the raw U+FFFD bytes
                index += 1
            } else if length == 3, bytes[index] == 0xE2, bytes[index + 1] == 0x80, bytes[index + 2] & 0xFE == 0xA8 {
                output += Array("\\u202".utf8) + [bytes[index + 2] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9")]
                index += 3
            } else {
                output += bytes[index..<index + length]
                index += length
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    static func append(_ text: String, to output: inout [UInt8]) {
        var copy = text
        copy.withUTF8 { append(UnsafeRawBufferPointer($0), to: &output) }
    }

    /// The length of the well-formed UTF-8 sequence at `index` (2-4), or 0 when it is not one.
    private static func validSequenceLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int {
        let lead = bytes[index]
        let (length, low, high): (Int, UInt8, UInt8) = switch lead {
        case 0xC2...0xDF: (2, 0x80, 0xBF)
        case 0xE0: (3, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80, 0xBF)
        case 0xED: (3, 0x80, 0x9F)
        case 0xF0: (4, 0x90, 0xBF)
        case 0xF1...0xF3: (4, 0x80, 0xBF)
        case 0xF4: (4, 0x80, 0x8F)
        default: (0, 0, 0)
        }
        guard length > 0, index + length <= bytes.count else { return 0 }
        guard (low...high).contains(bytes[index + 1]) else { return 0 }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) { return 0 }
        return length
    }
}
