/// Lower-case hexadecimal text of bytes, for identifiers and escapes: what `String(format: "%02x")`
/// gave, without full Foundation (and ICU) in the program.
///
/// ```swift
/// Hex.text(SecureRandom.bytes(count: 16))   // "3f09…", 32 characters
/// Hex.text(0x1F, width: 4)                  // "001f"
/// ```
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two digits per byte.
    public static func text<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hex digit (either case), or nil.
    public static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `value` in at least `width` digits, zero-padded.
    public static func text(_ value: UInt32, width: Int) -> String {
        let bare = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - bare.count)) + bare
    }
}
