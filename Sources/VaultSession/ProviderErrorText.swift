import BoundedJSON
import VaultCrypto

/// The provider's own words for an error, made safe to show: printable ASCII, bounded, and withheld
/// when they contain a credential the request carried (a provider that echoes its input must not
/// put a token into our error text).
struct ProviderErrorText {
    /// The secrets of the request the answer is about.
    let sent: [SecureBytes]

    /// `text` if it is printable, at most `max` bytes and holds none of the sent secrets; else nil.
    func clean(_ text: String?, max: Int = 512) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= max, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let bytes = Array(text.utf8)
        for secret in sent where secret.count >= 4 {
            let found = secret.withUnsafeBytes { needle -> Bool in
                guard needle.count <= bytes.count else { return false }
                for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
                    if (0..<needle.count).allSatisfy({ bytes[start + $0] == needle[$0] }) { return true }
                }
                return false
            }
            if found { return "(the provider's error text contained a credential and was withheld)" }
        }
        return text
    }

    /// The answer's JSON object, if it is one.
    static func object(_ body: SecureBytes) -> [String: JSONValue]? {
        body.withUnsafeBytes { raw in
            guard case .object(let object)? = try? JSONValue.parse(raw, maxDepth: 8) else { return nil }
            return object
        }
    }
}
