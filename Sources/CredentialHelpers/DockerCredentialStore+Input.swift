import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import BoundedJSON
import VaultCrypto

extension DockerCredentialStore {
    /// What `store` reads. The secret is copied into secure memory; the JSON parser's own `String`
    /// copy of it cannot be wiped (see docs/helpers.md).
    /// `@_spi(Fuzzing)` only so the libFuzzer target under `Fuzz/` can read docker's input.
    @_spi(Fuzzing) public struct CredentialFields {
        public var serverURL: String?
        public var username: String?
        public var secret: SecureBytes?
    }

    /// The server URL as Go's helpers read it: every line of standard input joined, then trimmed.
    @_spi(Fuzzing) public static func serverURL(_ input: SecureBytes) throws -> String {
        let text = input.withUnsafeBytes { raw in
            String(decoding: raw.filter { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        }
        let trimmed = text.trimmedWhitespace
        guard !trimmed.isEmpty else { throw DockerCredentialError("no credentials server URL") }
        return trimmed
    }

    @_spi(Fuzzing) public static func credentialFields(_ input: SecureBytes) throws -> CredentialFields {
        let object: [String: JSONValue]
        do {
            guard case .object(let parsed) = try input.withUnsafeBytes({ try JSONValue.parse($0, maxDepth: 4) }) else {
                throw DockerCredentialError("the input is not a JSON object: docker sends {\"ServerURL\",\"Username\",\"Secret\"}")
            }
            object = parsed
        } catch let error as JSONParseError {
            throw DockerCredentialError("the input is not valid JSON (\(error.reason.rawValue) at byte \(error.offset)): docker sends {\"ServerURL\",\"Username\",\"Secret\"}")
        }
        var fields = CredentialFields()
        // Go's decoder matches field names case-insensitively; unknown fields are ignored.
        for (name, value) in object {
            let field = name.lowercased()
            guard ["serverurl", "username", "secret"].contains(field) else { continue }
            guard case .string(let text) = value else {
                throw DockerCredentialError("\(name) must be a JSON string")
            }
            switch field {
            case "serverurl": fields.serverURL = text
            case "username": fields.username = text
            default: fields.secret = SecureBytes(copying: Array(text.utf8))
            }
        }
        return fields
    }
}
