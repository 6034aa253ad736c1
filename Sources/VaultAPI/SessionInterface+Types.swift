import BoundedJSON
import VaultCrypto

/// `org.sortedvault.session` (interfaces/org.sortedvault.session.varlink): its types, one type per
/// method, and its error names. Times are seconds since 1970-01-01 UTC. Tokens, the client secret
/// and the API key are base64 of their bytes on the wire and `SecureBytes` here.
public enum SessionInterface {
    public static let name = "org.sortedvault.session"

    /// Every secret parameter of every call of the interface (see ``VaultInterface/callSecrets``).
    public static let callSecrets = Save.requestSecrets

    /// Where and how the login is refreshed and revoked. URLs stay text here: the daemon checks them.
    public struct Provider: WireCodable, Equatable {
        public var kind: String?
        public var tokenEndpoint: String?
        public var revocationEndpoint: String?
        public var clientId: String?
        public var clientSecret: SecureBytes?
        public var clientAuthentication: String?
        public var issuer: String?
        public var url: String?
        public var apiKey: SecureBytes?

        public init(kind: String? = nil, tokenEndpoint: String? = nil, revocationEndpoint: String? = nil, clientId: String? = nil,
                    clientSecret: SecureBytes? = nil, clientAuthentication: String? = nil, issuer: String? = nil, url: String? = nil,
                    apiKey: SecureBytes? = nil) {
            self.kind = kind
            self.tokenEndpoint = tokenEndpoint
            self.revocationEndpoint = revocationEndpoint
            self.clientId = clientId
            self.clientSecret = clientSecret
            self.clientAuthentication = clientAuthentication
            self.issuer = issuer
            self.url = url
            self.apiKey = apiKey
        }

        public init(from parameters: WireParameters) throws(WireParameterError) {
            kind = try parameters.optionalString("kind")
            tokenEndpoint = try parameters.optionalString("tokenEndpoint")
            revocationEndpoint = try parameters.optionalString("revocationEndpoint")
            clientId = try parameters.optionalString("clientId")
            clientSecret = try parameters.optionalSecret("clientSecret")
            clientAuthentication = try parameters.optionalString("clientAuthentication")
            issuer = try parameters.optionalString("issuer")
            url = try parameters.optionalString("url")
            apiKey = try parameters.optionalSecret("apiKey")
        }

        public func encodeMembers(to writer: inout WireWriter) {
            writer.field("kind", kind)
            writer.field("tokenEndpoint", tokenEndpoint)
            writer.field("revocationEndpoint", revocationEndpoint)
            writer.field("clientId", clientId)
            writer.secretField("clientSecret", clientSecret)
            writer.field("clientAuthentication", clientAuthentication)
            writer.field("issuer", issuer)
            writer.field("url", url)
            writer.secretField("apiKey", apiKey)
        }
    }

    /// A usable access token.
    public struct Grant: WireCodable, Equatable {
        public var accessToken: SecureBytes
        public var tokenType: String
        public var expiresAt: Double
        public var scopes: [String]

        public init(accessToken: SecureBytes, tokenType: String, expiresAt: Double, scopes: [String]) {
            self.accessToken = accessToken
            self.tokenType = tokenType
            self.expiresAt = expiresAt
            self.scopes = scopes
        }

        public init(from parameters: WireParameters) throws(WireParameterError) {
            accessToken = try parameters.secret("accessToken")
            tokenType = try parameters.string("tokenType")
            expiresAt = try parameters.double("expiresAt")
            scopes = try parameters.has("scopes") ? parameters.strings("scopes") : []
        }

        public func encodeMembers(to writer: inout WireWriter) {
            writer.secretField("accessToken", accessToken)
            writer.field("tokenType", tokenType)
            writer.field("expiresAt", expiresAt)
            writer.field("scopes", scopes)
        }
    }
}
