import VaultCore
import VaultCrypto

/// A helper's names in the vault: a name the vault refuses (git's empty username) is stored in a
/// reversible encoding, so the helper keeps its ecosystem's contract.
///
/// A name the vault accepts (``ItemKey/checkName(_:what:)``) that does not start with ``prefix`` is
/// stored as it is, so items stay shared with `sortedvault` and other clients. Any other name is
/// stored as ``prefix`` followed by its UTF-8 bytes with `%`, control bytes and every byte of 0x80
/// and above percent-encoded (uppercase hex): plain ASCII the vault accepts, and never a name of the
/// first kind. The Python keyring backend keeps the same rule (`clients/python/sortedvault_keyring/names.py`);
/// docs/helpers.md, "Names the vault refuses", is its description, and both are held to
/// `Tests/Support/vault-name-encoding.json`.
///
/// ```swift
/// VaultNameEncoding.stored("")            // "%sv:"
/// VaultNameEncoding.original("%sv:")      // ""
/// ```
public enum VaultNameEncoding {
    public static let prefix = "%sv:"

    /// The vault's name for the helper's `name`.
    public static func stored(_ name: String) -> String {
        let accepted = (try? ItemKey.checkName(name, what: "name")) != nil
        if accepted && !name.utf8.starts(with: prefix.utf8) { return name }
        var encoded = Array(prefix.utf8)
        for byte in name.utf8 {
            if byte < 0x20 || byte == 0x7F || byte >= 0x80 || byte == UInt8(ascii: "%") {
                encoded += [UInt8(ascii: "%"), hexDigit(byte >> 4), hexDigit(byte & 0x0F)]
            } else {
                encoded.append(byte)
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// The helper's name for a name read from the vault; one not in the encoding is returned as it is.
    public static func original(_ stored: String) -> String {
        let bytes = Array(stored.utf8)
        let head = Array(prefix.utf8)
        guard bytes.starts(with: head) else { return stored }
        var decoded: [UInt8] = []
        var index = head.count
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = Hex.value(bytes[index + 1]), let low = Hex.value(bytes[index + 2]) else {
                    return stored
                }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                guard byte < 0x80 else { return stored }
                decoded.append(byte)
                index += 1
            }
        }
        return String(validating: decoded, as: UTF8.self) ?? stored
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
