import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import BoundedJSON
import VaultCrypto

/// A JSON object of string members built in secure memory, for bodies that carry tokens.
struct JSONBody {
    private var form = [(String, SecureBytes)]()

    mutating func add(_ name: String, secret value: SecureBytes) {
        form.append((name, value))
    }

    /// `{"name":"value",…}`; `"`, `\` and control bytes in values are escaped, UTF-8 passes as it is.
    func finish() -> SecureBytes {
        var parts: [SecureBytes] = [SecureBytes(copying: Array("{".utf8))]
        for (index, (name, value)) in form.enumerated() {
            let key = (index == 0 ? "" : ",") + String(decoding: JSONValue.string(name).serialized(), as: UTF8.self) + ":\""
            parts.append(SecureBytes(copying: Array(key.utf8)))
            parts.append(value.withUnsafeBytes { raw in
                let escaped = raw.reduce(0) { $0 + (Self.needsEscape($1) ? 6 : 1) }
                return SecureBytes(count: escaped) { out in
                    var offset = 0
                    for byte in raw {
                        if Self.needsEscape(byte) {
                            for b in Array(("\\u" + Hex.text(UInt32(byte), width: 4)).utf8) { out[offset] = b; offset += 1 }
                        } else {
                            out[offset] = byte; offset += 1
                        }
                    }
                }
            })
            parts.append(SecureBytes(copying: Array("\"".utf8)))
        }
        parts.append(SecureBytes(copying: Array("}".utf8)))
        return .joined(parts)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
