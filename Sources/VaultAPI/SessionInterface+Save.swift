import BoundedJSON
import VaultCrypto

/// `Save(service, account, tokenResponse, provider, maxLifetimeSeconds?) -> (session)`, written by
/// hand (the interface file marks it `@handwritten`): `tokenResponse` is the provider's own JSON
/// answer, passed as an object, and its tokens are the JSON strings the provider sent (not base64),
/// read straight into secure memory on both sides (``tokenMembers``) — secrets the IDL's types
/// cannot name. `provider`'s clientSecret and apiKey are base64 secrets, as its type declares.
extension SessionInterface.Save {

    /// The members of a token response that hold tokens, under every provider kind's names
    /// (TokenResponse.tokenMembers in VaultSession: a test keeps the two lists equal).
    public static let tokenMembers = ["access_token", "refresh_token", "id_token", "idToken", "refreshToken"]

    public static var requestSecrets: SecretLimits {
        var text: [String: Int] = [:]
        for member in tokenMembers {
            text["tokenResponse." + member] = member.lowercased().hasPrefix("id") ? WireLimits.tokenBytes : WireLimits.responseTokenBytes
        }
        return SessionInterface.Provider.secretLimits.under("provider").merging(SecretLimits([:], text: text))
    }

    public struct Request: WireCodable, Equatable {
        public var service: String
        public var account: String
        /// The token response's members but its tokens.
        public var tokenResponse: [String: JSONValue]
        /// The token response's tokens (``tokenMembers`` that are strings), by member name.
        public var tokens: [String: SecureBytes]
        public var provider: SessionInterface.Provider
        public var maxLifetimeSeconds: Int64?

        public init(service: String, account: String, tokenResponse: [String: JSONValue], tokens: [String: SecureBytes],
                    provider: SessionInterface.Provider, maxLifetimeSeconds: Int64? = nil) {
            self.service = service
            self.account = account
            self.tokenResponse = tokenResponse
            self.tokens = tokens
            self.provider = provider
            self.maxLifetimeSeconds = maxLifetimeSeconds
        }

        /// A request from a token response an app holds as `JSONValue`s: its token strings are
        /// copied into secure memory here (the app's own copies are the app's to drop).
        public init(service: String, account: String, tokenResponse: [String: JSONValue], provider: SessionInterface.Provider,
                    maxLifetimeSeconds: Int64? = nil) {
            var rest = tokenResponse
            var tokens: [String: SecureBytes] = [:]
            for member in SessionInterface.Save.tokenMembers {
                if case .string(let text)? = rest[member] {
                    tokens[member] = SecureBytes(copying: text.utf8)
                    rest[member] = nil
                }
            }
            self.init(service: service, account: account, tokenResponse: rest, tokens: tokens, provider: provider,
                      maxLifetimeSeconds: maxLifetimeSeconds)
        }

        /// A request from the JSON text of a token response (what `sortedvault session save`
        /// reads): its tokens go from the text into secure memory without a `String`. Throws
        /// ``WireParameterError`` naming `tokenResponse` or a token member when the text is not a
        /// JSON object or a token is not a valid string.
        public init(service: String, account: String, tokenResponseJSON raw: UnsafeRawBufferPointer, provider: SessionInterface.Provider,
                    maxLifetimeSeconds: Int64? = nil) throws(WireParameterError) {
            let limits = SessionInterface.Save.requestSecrets
            var fields: [String: SecretField] = [:]
            let value: JSONValue
            do {
                value = try JSONValue.parse(raw, maxDepth: 8, diverting: SessionInterface.Save.divertedTokenMembers) { member, text in
                    fields[member] = limits.decode("tokenResponse." + member, text)
                }
            } catch {
                throw WireParameterError("tokenResponse", "is not valid JSON (\(error.reason.rawValue)); pass the provider's answer unchanged")
            }
            guard let object = value.objectValue else { throw WireParameterError("tokenResponse", "must be a JSON object") }
            var tokens: [String: SecureBytes] = [:]
            for (member, field) in fields.sorted(by: { $0.key < $1.key }) {
                switch field {
                case .bytes(let bytes): tokens[member] = bytes
                case .invalid(let rule): throw WireParameterError("tokenResponse." + member, rule)
                }
            }
            self.init(service: service, account: account, tokenResponse: object, tokens: tokens, provider: provider,
                      maxLifetimeSeconds: maxLifetimeSeconds)
        }

        public init(from p: WireParameters) throws(WireParameterError) {
            service = try p.string("service")
            account = try p.string("account")
            tokenResponse = try p.object("tokenResponse")
            var tokens: [String: SecureBytes] = [:]
            for member in SessionInterface.Save.tokenMembers {
                tokens[member] = try p.optionalTextSecret("tokenResponse." + member)
            }
            self.tokens = tokens
            provider = try p.decode("provider")
            maxLifetimeSeconds = try p.optionalInt("maxLifetimeSeconds")
        }

        public func encodeMembers(to w: inout WireWriter) {
            w.field("service", service)
            w.field("account", account)
            w.key("tokenResponse")
            w.beginObject()
            for (member, value) in tokenResponse.sorted(by: { $0.key < $1.key }) where tokens[member] == nil {
                w.key(member)
                w.json(value)
            }
            for (member, token) in tokens.sorted(by: { $0.key < $1.key }) {
                w.key(member)
                w.secretText(token)
            }
            w.endObject()
            w.field("provider", provider)
            w.field("maxLifetimeSeconds", maxLifetimeSeconds)
        }
    }

    /// The top-level token members of a token response's own JSON text.
    static let divertedTokenMembers = JSONDivertedPaths(Set(tokenMembers))

    /// The login as stored: Status's reply.
    public typealias Reply = SessionInterface.Status.Reply
}
