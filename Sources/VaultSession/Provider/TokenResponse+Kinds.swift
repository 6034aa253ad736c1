import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

extension TokenResponse {
    /// Parses a sign-in or refresh answer of a provider of `kind`, bounded in size and depth.
    ///
    /// For Firebase both shapes are accepted, and the token handed to the app is the ID token (what
    /// Firebase apps send as their bearer token):
    /// - identitytoolkit (`signInWithPassword`, `signUp`): `idToken`, `refreshToken`, `expiresIn`
    ///   (a string), `localId`;
    /// - securetoken (`/v1/token`): `id_token`, `refresh_token`, `expires_in` (a string), `user_id`.
    public init(json bytes: some Collection<UInt8>, kind: ProviderKind) throws {
        guard kind == .firebase else {
            try self.init(json: bytes)
            return
        }
        let (object, tokens) = try Self.parse(json: bytes) { _ in
            "the token response must be a JSON object; pass Firebase's answer unchanged"
        }
        try self.init(object: object, tokens: tokens, kind: kind)
    }

    /// Reads a parsed answer of a provider of `kind` (see ``init(json:kind:)``).
    public init(object: [String: JSONValue], kind: ProviderKind) throws {
        try self.init(object: object, tokens: [:], kind: kind)
    }

    /// Reads a parsed answer of a provider of `kind` whose token members were taken out into
    /// secure memory (see ``init(object:tokens:)``).
    public init(object: [String: JSONValue], tokens: [String: SecureBytes], kind: ProviderKind) throws {
        guard kind == .firebase else {
            try self.init(object: object, tokens: tokens)
            return
        }
        // identitytoolkit's camelCase names first, then securetoken's.
        func field(_ camel: String, _ snake: String) -> (JSONValue, String)? {
            if let value = object[camel], !value.isNull { return (value, camel) }
            if let value = object[snake], !value.isNull { return (value, snake) }
            return nil
        }
        // The same choice of name for a token, diverted or left in the object.
        func token(_ camel: String, _ snake: String) throws -> SecureBytes? {
            let present = tokens[camel] != nil || object[camel].map { !$0.isNull } == true
            return try Self.tokenMember(present ? camel : snake, object, tokens)
        }
        guard let idToken = try token("idToken", "id_token") else {
            throw VaultError.invalidArgument("the Firebase answer has no idToken (or id_token) string; pipe the answer of signInWithPassword or securetoken unchanged")
        }
        let refresh = try token("refreshToken", "refresh_token")
        if refresh == nil, let (_, name) = field("refreshToken", "refresh_token") {
            throw VaultError.invalidArgument("the Firebase answer's \(name) must be a string")
        }
        let expires = try field("expiresIn", "expires_in").flatMap { try Self.seconds($0.0, field: $0.1) }
        var user: String?
        if let (value, _) = field("localId", "user_id"), let text = value.stringValue, !text.isEmpty, text.utf8.count <= 512,
           text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) {
            user = text
        }
        self.init(accessToken: idToken, tokenType: "Bearer", expiresIn: expires, refreshToken: refresh,
                  idToken: idToken, userID: user)
    }
}
