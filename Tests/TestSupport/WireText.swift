import Foundation

/// Standard base64 of `text`'s UTF-8 bytes: how every secret field (item secrets, passphrases,
/// tokens, client secrets) travels on the wire, for tests that write raw messages.
public func base64(_ text: String) -> String {
    Data(text.utf8).base64EncodedString()
}

/// Standard base64 of `bytes`.
public func base64(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
}
