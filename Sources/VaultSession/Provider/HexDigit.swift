/// Hex digits as percent escapes write them (RFC 3986 §2.1), either case: the one reading that
/// the callback's parser and the provider-error cleaner share.
enum HexDigit {
    /// The digit's value, 0 to 15; nil for a byte that is not a hex digit.
    static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
