import BoundedJSON
import Foundation
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
        guard bytes.count <= Self.maximumBytes else {
            throw VaultError.invalidArgument("the token response is \(bytes.count) bytes; the limit is \(Self.maximumBytes)")
        }
        guard case .object(let object)? = try? JSONValue.parse(bytes, maxDepth: 8) else {
            throw VaultError.invalidArgument("the token response must be a JSON object; pass Firebase's answer unchanged")
        }
        try self.init(object: object, kind: kind)
    }

    /// Reads a parsed answer of a provider of `kind` (see ``init(json:kind:)``).
    public init(object: [String: JSONValue], kind: ProviderKind) throws {
        guard kind == .firebase else {
            try self.init(object: object)
            return
        }
        // identitytoolkit's camelCase names first, then securetoken's.
        func field(_ camel: String, _ snake: String) -> (JSONValue, String)? {
            if let value = object[camel], !value.isNull { return (value, camel) }
            if let value = object[snake], !value.isNull { return (value, snake) }
            return nil
        }
        guard let (idValue, idName) = field("idToken", "id_token"), let idText = idValue.stringValue else {
            throw VaultError.invalidArgument("the Firebase answer has no idToken (or id_token) string; pipe the answer of signInWithPassword or securetoken unchanged")
        }
        let idToken = try Self.token(idText, field: idName, maxBytes: Self.maximumBytes)
        var refresh: SecureBytes?
        if let (value, name) = field("refreshToken", "refresh_token") {
            guard let text = value.stringValue else { throw VaultError.invalidArgument("the Firebase answer's \(name) must be a string") }
            refresh = try Self.token(text, field: name)
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
