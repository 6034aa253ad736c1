import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A successful token response (RFC 6749 §5.1), as the client got it at sign-in or as a refresh
/// returns it. Tokens are copied into secure memory; nothing here ever prints them.
///
/// ```swift
/// let response = try TokenResponse(json: Array(stdinBytes))
/// ```
///
/// Accepted beyond the RFC, because real providers send them: `expires_in` as a numeric string
/// (Firebase), `refresh_token_expires_in`, and the user id as `user_id` (Firebase), `user.id`
/// (Supabase) or the unverified `sub` claim of the id token (for display only).
public struct TokenResponse: Sendable, CustomStringConvertible {
    public var accessToken: SecureBytes
    public var tokenType: String
    /// Seconds the access token lives, from the moment of the response.
    public var expiresIn: TimeInterval?
    public var refreshToken: SecureBytes?
    public var refreshTokenExpiresIn: TimeInterval?
    /// The granted scopes; nil when the response did not list them (they equal the requested ones).
    public var scopes: [String]?
    public var idToken: SecureBytes?
    public var userID: String?
    /// The user's e-mail address when the answer names one the provider verified (GoTrue's `user`
    /// with `email_confirmed_at`): what a sign-in of an e-mail-keyed provider is stored under by default.
    public var email: String?

    /// The largest response accepted, in bytes.
    public static let maximumBytes = 64 * 1024
    /// The longest token accepted, in bytes.
    public static let maximumTokenBytes = 16 * 1024

    public init(accessToken: SecureBytes, tokenType: String = "Bearer", expiresIn: TimeInterval? = nil,
                refreshToken: SecureBytes? = nil, refreshTokenExpiresIn: TimeInterval? = nil, scopes: [String]? = nil,
                idToken: SecureBytes? = nil, userID: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.refreshTokenExpiresIn = refreshTokenExpiresIn
        self.scopes = scopes
        self.idToken = idToken
        self.userID = userID
    }

    /// The members of a token response that hold tokens, under every provider kind's names. Parsed
    /// from the JSON text straight into secure memory: their text never becomes a `String`.
    public static let tokenMembers: Set<String> = ["access_token", "refresh_token", "id_token", "idToken", "refreshToken"]

    /// Parses the JSON text of a token response, bounded in size and depth; the tokens go from the
    /// text into secure memory without a `String` in between.
    public init(json bytes: some Collection<UInt8>) throws {
        let (object, tokens) = try Self.parse(json: bytes) { reason in
            "the token response is not valid JSON (\(reason)); pass the provider's JSON answer unchanged"
        }
        try self.init(object: object, tokens: tokens)
    }

    /// Reads the fields of a parsed token response object. Error text names fields, never values.
    public init(object: [String: JSONValue]) throws {
        try self.init(object: object, tokens: [:])
    }

    /// Reads a token response whose token members (``tokenMembers``) were taken out of `object`
    /// into secure memory as `tokens`, by member name; a token member left in `object` as a string
    /// is read from there.
    public init(object: [String: JSONValue], tokens: [String: SecureBytes]) throws {
        guard let access = try Self.tokenMember("access_token", object, tokens) else {
            throw VaultError.invalidArgument("the token response has no access_token string")
        }
        accessToken = access
        guard let type = object["token_type"]?.stringValue, !type.isEmpty, type.utf8.count <= 64,
              type.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw VaultError.invalidArgument("the token response needs a token_type such as \"Bearer\"")
        }
        tokenType = type
        expiresIn = try Self.seconds(object["expires_in"], field: "expires_in")
        refreshToken = try Self.tokenMember("refresh_token", object, tokens)
        refreshTokenExpiresIn = try Self.seconds(object["refresh_token_expires_in"], field: "refresh_token_expires_in")
        if let scope = object["scope"], !scope.isNull {
            guard let text = scope.stringValue, text.utf8.count <= 4096 else {
                throw VaultError.invalidArgument("the token response's scope must be a space-separated string of at most 4096 bytes")
            }
            scopes = text.split(separator: " ").map(String.init)
        }
        idToken = try Self.tokenMember("id_token", object, tokens)
        userID = Self.userID(object, idToken: idToken)
        email = Self.verifiedEmail(object)
    }

    /// Parses a token response object, bounded, diverting its ``tokenMembers`` into secure memory
    /// (each checked as a token of its member's limit). `invalid` words the error for text that is
    /// not a JSON document.
    static func parse(json bytes: some Collection<UInt8>, invalid: (String) -> String) throws
        -> (object: [String: JSONValue], tokens: [String: SecureBytes]) {
        guard bytes.count <= Self.maximumBytes else {
            throw VaultError.invalidArgument("the token response is \(bytes.count) bytes; the limit is \(Self.maximumBytes)")
        }
        if let parsed = try bytes.withContiguousStorageIfAvailable({ try parse(raw: UnsafeRawBufferPointer($0), invalid: invalid) }) {
            return parsed
        }
        // Not contiguous: copied once, into secure memory.
        return try SecureBytes(copying: bytes).withUnsafeBytes { try parse(raw: $0, invalid: invalid) }
    }

    private static func parse(raw: UnsafeRawBufferPointer, invalid: (String) -> String) throws
        -> (object: [String: JSONValue], tokens: [String: SecureBytes]) {
        var tokens: [String: Result<SecureBytes, VaultError>] = [:]
        let value: JSONValue
        do {
            value = try JSONValue.parse(raw, maxDepth: 8, diverting: divertedMembers) { name, text in
                tokens[name] = Result { () throws(VaultError) -> SecureBytes in
                    try token(raw: text, field: name, maxBytes: byteLimit(of: name))
                }
            }
        } catch {
            throw VaultError.invalidArgument(invalid(error.reason.rawValue))
        }
        guard let object = value.objectValue else {
            throw VaultError.invalidArgument("the token response must be a JSON object")
        }
        var checked: [String: SecureBytes] = [:]
        for (name, result) in tokens.sorted(by: { $0.key < $1.key }) { checked[name] = try result.get() }
        return (object, checked)
    }

    private static let divertedMembers = JSONDivertedPaths(tokenMembers)

    /// The longest value `member` may hold: an ID token carries claims and may be long.
    public static func byteLimit(of member: String) -> Int {
        member == "id_token" || member == "idToken" ? maximumBytes : maximumTokenBytes
    }

    /// The token at `member`: from `tokens` when it was diverted, else a string member of `object`
    /// (nil when absent, null or not a string).
    static func tokenMember(_ member: String, _ object: [String: JSONValue], _ tokens: [String: SecureBytes]) throws -> SecureBytes? {
        if let token = tokens[member] { return token }
        return try object[member].flatMap(\.stringValue).map { try token($0, field: member, maxBytes: byteLimit(of: member)) }
    }

    public var description: String {
        "TokenResponse(type: \(tokenType), expiresIn: \(expiresIn.map { "\($0)" } ?? "?"), refreshToken: \(refreshToken == nil ? "none" : "<redacted>"))"
    }

    /// A token must be visible ASCII (RFC 6749 Appendix A, VSCHAR), so it can go into an
    /// `Authorization` header unchanged.
    static func token(_ text: String, field: String, maxBytes: Int = maximumTokenBytes) throws -> SecureBytes {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= maxBytes else {
            throw VaultError.invalidArgument("the token response's \(field) must be 1 to \(maxBytes) bytes")
        }
        guard utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw VaultError.invalidArgument("the token response's \(field) holds characters a token may not contain")
        }
        return SecureBytes(copying: utf8)
    }

    /// A token from the raw text of a JSON string (between its quotes, escapes unresolved): the
    /// escapes are resolved straight into secure memory, and the result checked as ``token(_:field:maxBytes:)`` does.
    static func token(raw: UnsafeRawBufferPointer, field: String, maxBytes: Int = maximumTokenBytes) throws(VaultError) -> SecureBytes {
        let count: Int
        do {
            count = try JSONValue.unescape(raw, into: nil)
        } catch {
            throw VaultError.invalidArgument("the token response's \(field) is not a valid JSON string (\(error.reason.rawValue))")
        }
        guard count > 0, count <= maxBytes else {
            throw VaultError.invalidArgument("the token response's \(field) must be 1 to \(maxBytes) bytes")
        }
        let token = try? SecureBytes(count: count) { out in _ = try JSONValue.unescape(raw, into: out) }
        guard let token, token.withUnsafeBytes({ $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }) else {
            throw VaultError.invalidArgument("the token response's \(field) holds characters a token may not contain")
        }
        return token
    }

    static func seconds(_ value: JSONValue?, field: String) throws -> TimeInterval? {
        guard let value, !value.isNull else { return nil }
        let number: Double?
        switch value {
        case .int(let int): number = Double(int)
        case .double(let double): number = double
        case .string(let string): number = Double(string)
        default: number = nil
        }
        guard let number, number.isFinite, number >= 0, number <= 10 * 365 * 86400 else {
            throw VaultError.invalidArgument("the token response's \(field) must be a number of seconds")
        }
        return number
    }

    /// GoTrue's `user.email` when `user.email_confirmed_at` says it was confirmed.
    private static func verifiedEmail(_ object: [String: JSONValue]) -> String? {
        guard let user = object["user"]?.objectValue, case .string(let confirmed)? = user["email_confirmed_at"], !confirmed.isEmpty,
              case .string(let email)? = user["email"], email.contains("@"), email.utf8.count <= 320,
              email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else { return nil }
        return email
    }

    private static func userID(_ object: [String: JSONValue], idToken: SecureBytes?) -> String? {
        func clean(_ value: JSONValue?) -> String? {
            let text: String?
            switch value {
            case .string(let string)?: text = string
            case .int(let int)?: text = String(int)
            default: text = nil
            }
            guard let text, !text.isEmpty, text.utf8.count <= 512, text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else { return nil }
            return text
        }
        if let id = clean(object["user_id"]) { return id }
        if let id = clean(object["user"]?.objectValue?["id"]) { return id }
        guard let idToken else { return nil }
        return idToken.withUnsafeBytes { raw -> String? in
            let parts = raw.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard parts.count == 3, let payload = base64URLDecode(parts[1]),
                  case .object(let claims)? = try? JSONValue.parse(payload, maxDepth: 8) else { return nil }
            return clean(claims["sub"])
        }
    }
}

/// Decodes unpadded base64url (JWT segments); nil for anything else.
func base64URLDecode(_ bytes: some Collection<UInt8>) -> [UInt8]? {
    guard bytes.count <= TokenResponse.maximumBytes else { return nil }
    var text = String(decoding: bytes, as: UTF8.self).replacing("-", with: "+").replacing("_", with: "/")
    while text.utf8.count % 4 != 0 { text += "=" }
    return Data(base64Encoded: text).map(Array.init)
}
