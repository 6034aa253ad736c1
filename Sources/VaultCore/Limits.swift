/// The documented caps on everything a caller hands the vault. Every backend enforces them through
/// ``ItemKey`` and ``StoreOptions``, so an item that one backend accepts, every backend accepts.
public enum Limits {
    /// The largest secret, in bytes: 512 KiB. Fits a socket frame of 1 MiB after base64.
    public static let maximumSecretBytes = 512 * 1024
    /// The longest service or account name, in UTF-8 bytes.
    public static let maximumNameBytes = 512
    /// The longest label, in UTF-8 bytes.
    public static let maximumLabelBytes = 1024
    /// The most attributes on one item.
    public static let maximumAttributeCount = 32
    /// The longest attribute name, in UTF-8 bytes.
    public static let maximumAttributeNameBytes = 128
    /// The longest attribute value, in UTF-8 bytes.
    public static let maximumAttributeValueBytes = 1024
}

/// Checks a caller-supplied string: non-empty where required, within `maxBytes`, and free of control
/// characters (which would break logs, terminals and line-based tools).
func validateText(_ value: String, what: String, maxBytes: Int, allowEmpty: Bool = false) throws {
    if !allowEmpty && value.isEmpty {
        throw VaultError.invalidArgument("\(what) must not be empty")
    }
    let length = value.utf8.count
    if length > maxBytes {
        throw VaultError.invalidArgument("\(what) is \(length) bytes; the limit is \(maxBytes)")
    }
    // ASCII (the common case) needs only a byte compare; other text gets the Unicode category check.
    let isASCII = value.utf8.allSatisfy { $0 < 0x80 }
    let hasControl = isASCII
        ? value.utf8.contains { $0 < 0x20 || $0 == 0x7F }
        : value.unicodeScalars.contains { $0.properties.generalCategory == .control }
    if hasControl {
        throw VaultError.invalidArgument("\(what) must not contain control characters")
    }
}
