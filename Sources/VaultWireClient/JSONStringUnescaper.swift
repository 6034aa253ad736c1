import VaultCrypto

/// Turns the inside of a JSON string (already checked by ``JSONScanner``) into its UTF-8 bytes,
/// written only to secure memory: for a secret field such as an access token.
enum JSONStringUnescaper {
    static func unescape(_ raw: UnsafeRawBufferPointer) -> SecureBytes? {
        var length = 0
        var ok = true
        // Unescaping never makes the text longer, so the raw length bounds the output.
        let scratch = SecureBytes(count: raw.count) { out in
            var i = 0
            func put(_ byte: UInt8) { out[length] = byte; length += 1 }
            func hex4(_ at: Int) -> UInt32? {
                guard at + 4 <= raw.count else { return nil }
                var value: UInt32 = 0
                for k in 0..<4 {
                    guard let digit = hexValue(raw[at + k]) else { return nil }
                    value = value << 4 | UInt32(digit)
                }
                return value
            }
            while i < raw.count, ok {
                let byte = raw[i]
                guard byte == UInt8(ascii: "\\") else { put(byte); i += 1; continue }
                guard i + 1 < raw.count else { ok = false; break }
                switch raw[i + 1] {
                case UInt8(ascii: "\""): put(0x22)
                case UInt8(ascii: "\\"): put(0x5C)
                case UInt8(ascii: "/"): put(0x2F)
                case UInt8(ascii: "b"): put(0x08)
                case UInt8(ascii: "f"): put(0x0C)
                case UInt8(ascii: "n"): put(0x0A)
                case UInt8(ascii: "r"): put(0x0D)
                case UInt8(ascii: "t"): put(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4(i + 2) else { ok = false; break }
                    i += 4
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard i + 3 < raw.count, raw[i + 2] == UInt8(ascii: "\\"), raw[i + 3] == UInt8(ascii: "u"),
                              let low = hex4(i + 4), (0xDC00...0xDFFF).contains(low) else { ok = false; break }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        ok = false
                        break
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { ok = false; break }
                    for unit in UTF8.encode(unicode)! { put(unit) }
                default:
                    ok = false
                }
                i += 2
            }
        }
        guard ok else { return nil }
        return scratch.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}
