import FoundationEssentials
import VaultCore

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// One message of git's credential-helper protocol (gitcredentials(7), git-credential(1)):
/// `key=value` lines ending at a blank line or end of input.
///
/// ```
/// protocol=https
/// host=git.example.com
/// username=ada
/// password=…
/// ```
///
/// Parsing is bounded (64 KiB, 8 KiB a line) and strict where git's CVE-2020-5260 class of bugs
/// lives: a NUL, CR or other control character in any field, a `url=` whose percent-decoding yields
/// one, or a `url=` that carries a password, is refused — the message says which field, never its
/// value when that could be a secret. The password goes straight into secure memory.
public struct GitCredentialMessage: Sendable {
    public var protocolName: String?
    public var host: String?
    public var path: String?
    public var username: String?
    public var password: SecureBytes?

    public static let maximumBytes = 65536
    public static let maximumLineBytes = 8192

    public init(protocolName: String? = nil, host: String? = nil, path: String? = nil, username: String? = nil) {
        self.protocolName = protocolName
        self.host = host
        self.path = path
        self.username = username
    }

    /// Parses what git wrote on the helper's standard input. Unknown keys are ignored, as git asks.
    public static func parse(_ input: SecureBytes) throws -> GitCredentialMessage {
        try input.withUnsafeBytes { raw in
            guard raw.count <= maximumBytes else { throw GitCredentialError("the input is over \(maximumBytes) bytes") }
            var message = GitCredentialMessage()
            var lineNumber = 0
            for line in raw.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                lineNumber += 1
                if line.isEmpty { break }  // a blank line ends the message
                guard line.count <= maximumLineBytes else { throw GitCredentialError("line \(lineNumber) is over \(maximumLineBytes) bytes") }
                guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
                    throw GitCredentialError("line \(lineNumber) is not key=value")
                }
                let key = String(decoding: line[line.startIndex..<equals], as: UTF8.self)
                let value = line[(equals + 1)...]
                if key == "password" {
                    // Only NUL and CR can hide in a password line; either is an injection attempt.
                    if value.contains(0) || value.contains(0x0D) {
                        throw GitCredentialError("the password contains a NUL or carriage return; refusing it")
                    }
                    message.password = SecureBytes(copying: value)
                    continue
                }
                guard ["protocol", "host", "path", "username", "url"].contains(key) else { continue }
                let text = try checkedText(value, field: key)
                switch key {
                case "protocol": message.protocolName = text
                case "host": message.host = text
                case "path": message.path = text
                case "username": message.username = text
                default: try message.apply(url: text)
                }
            }
            return message
        }
    }

    /// Resets the fields from a `url=` line, as git does, refusing embedded passwords and encoded
    /// control characters.
    mutating func apply(url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme else {
            throw GitCredentialError("url= is not a URL git would send")
        }
        if components.percentEncodedPassword != nil {
            throw GitCredentialError("refusing a url= with a password in it: git passes passwords in password=, never in the URL")
        }
        protocolName = scheme
        host = try components.host.map { host in
            let decoded = try Self.checkedText(Array((host.percentDecoded ?? host).utf8)[...], field: "url (host)")
            return components.port.map { "\(decoded):\($0)" } ?? decoded
        }
        let rawPath = components.percentEncodedPath
        let decodedPath = rawPath.percentDecoded ?? rawPath
        path = decodedPath.isEmpty ? nil : try Self.checkedText(Array(decodedPath.drop { $0 == "/" }.utf8)[...], field: "url (path)")
        username = try components.percentEncodedUser.map {
            try Self.checkedText(Array(($0.percentDecoded ?? $0).utf8)[...], field: "url (username)")
        }
    }

    /// UTF-8 text with no control characters (NUL, CR, LF, DEL, …).
    static func checkedText(_ bytes: ArraySlice<UInt8>, field: String) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw GitCredentialError("\(field) is not UTF-8 text")
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw GitCredentialError("\(field) contains a control character (newline, NUL, …): refusing a possible credential injection")
        }
        return text
    }

    static func checkedText(_ bytes: Slice<UnsafeRawBufferPointer>, field: String) throws -> String {
        try checkedText(ArraySlice(bytes), field: field)
    }
}

/// A refused request or a failed step; `description` never holds a password or token.
public struct GitCredentialError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
