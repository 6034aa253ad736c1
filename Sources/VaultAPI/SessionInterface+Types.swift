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

    /// A login without its secrets.
    public struct SessionState: WireCodable, Equatable {
        public var state: String
        public var providerKind: String
        public var tokenType: String
        public var scopes: [String]
        public var accessTokenExpiresAt: Double
        public var refreshTokenExpiresAt: Double?
        public var absoluteExpiresAt: Double?
        public var hasRefreshToken: Bool
        public var hasIdToken: Bool
        public var issuedAt: Double
        public var signedInAt: Double
        public var lastRefreshedAt: Double?
        public var userId: String?
        public var tokenEndpoint: String
        public var revocationEndpoint: String?
        public var clientId: String
        public var clientAuthentication: String
        public var hasClientSecret: Bool
        public var retryNotBefore: Double?

        public init(state: String, providerKind: String, tokenType: String, scopes: [String], accessTokenExpiresAt: Double,
                    refreshTokenExpiresAt: Double?, absoluteExpiresAt: Double?, hasRefreshToken: Bool, hasIdToken: Bool,
                    issuedAt: Double, signedInAt: Double, lastRefreshedAt: Double?, userId: String?, tokenEndpoint: String,
                    revocationEndpoint: String?, clientId: String, clientAuthentication: String, hasClientSecret: Bool,
                    retryNotBefore: Double?) {
            self.state = state
            self.providerKind = providerKind
            self.tokenType = tokenType
            self.scopes = scopes
            self.accessTokenExpiresAt = accessTokenExpiresAt
            self.refreshTokenExpiresAt = refreshTokenExpiresAt
            self.absoluteExpiresAt = absoluteExpiresAt
            self.hasRefreshToken = hasRefreshToken
            self.hasIdToken = hasIdToken
            self.issuedAt = issuedAt
            self.signedInAt = signedInAt
            self.lastRefreshedAt = lastRefreshedAt
            self.userId = userId
            self.tokenEndpoint = tokenEndpoint
            self.revocationEndpoint = revocationEndpoint
            self.clientId = clientId
            self.clientAuthentication = clientAuthentication
            self.hasClientSecret = hasClientSecret
            self.retryNotBefore = retryNotBefore
        }

        public init(from p: WireParameters) throws(WireParameterError) {
            state = try p.string("state")
            providerKind = try p.optionalString("providerKind") ?? "oauth2"
            tokenType = try p.string("tokenType")
            scopes = try p.has("scopes") ? p.strings("scopes") : []
            accessTokenExpiresAt = try p.double("accessTokenExpiresAt")
            refreshTokenExpiresAt = try p.optionalDouble("refreshTokenExpiresAt")
            absoluteExpiresAt = try p.optionalDouble("absoluteExpiresAt")
            hasRefreshToken = try p.bool("hasRefreshToken")
            hasIdToken = try p.optionalBool("hasIdToken") ?? false
            issuedAt = try p.double("issuedAt")
            signedInAt = try p.double("signedInAt")
            lastRefreshedAt = try p.optionalDouble("lastRefreshedAt")
            userId = try p.optionalString("userId")
            tokenEndpoint = try p.string("tokenEndpoint")
            revocationEndpoint = try p.optionalString("revocationEndpoint")
            clientId = try p.string("clientId")
            clientAuthentication = try p.string("clientAuthentication")
            hasClientSecret = try p.bool("hasClientSecret")
            retryNotBefore = try p.optionalDouble("retryNotBefore")
        }

        public func encodeMembers(to w: inout WireWriter) {
            w.field("state", state)
            w.field("providerKind", providerKind)
            w.field("tokenType", tokenType)
            w.field("scopes", scopes)
            w.field("accessTokenExpiresAt", accessTokenExpiresAt)
            w.field("refreshTokenExpiresAt", refreshTokenExpiresAt)
            w.field("absoluteExpiresAt", absoluteExpiresAt)
            w.field("hasRefreshToken", hasRefreshToken)
            w.field("hasIdToken", hasIdToken)
            w.field("issuedAt", issuedAt)
            w.field("signedInAt", signedInAt)
            w.field("lastRefreshedAt", lastRefreshedAt)
            w.field("userId", userId)
            w.field("tokenEndpoint", tokenEndpoint)
            w.field("revocationEndpoint", revocationEndpoint)
            w.field("clientId", clientId)
            w.field("clientAuthentication", clientAuthentication)
            w.field("hasClientSecret", hasClientSecret)
            w.field("retryNotBefore", retryNotBefore)
        }
    }

    /// One login as List shows it; never tokens.
    public struct Login: WireCodable, Equatable {
        public var service: String
        public var account: String
        public var providerKind: String
        public var userId: String?
        public var state: String
        public var accessTokenExpiresAt: Double
        public var refreshTokenExpiresAt: Double?
        public var absoluteExpiresAt: Double?
        public var hasRefreshToken: Bool

        public init(service: String, account: String, providerKind: String, userId: String?, state: String,
                    accessTokenExpiresAt: Double, refreshTokenExpiresAt: Double?, absoluteExpiresAt: Double?, hasRefreshToken: Bool) {
            self.service = service
            self.account = account
            self.providerKind = providerKind
            self.userId = userId
            self.state = state
            self.accessTokenExpiresAt = accessTokenExpiresAt
            self.refreshTokenExpiresAt = refreshTokenExpiresAt
            self.absoluteExpiresAt = absoluteExpiresAt
            self.hasRefreshToken = hasRefreshToken
        }

        public init(from p: WireParameters) throws(WireParameterError) {
            service = try p.string("service")
            account = try p.string("account")
            providerKind = try p.optionalString("providerKind") ?? "oauth2"
            userId = try p.optionalString("userId")
            state = try p.string("state")
            accessTokenExpiresAt = try p.double("accessTokenExpiresAt")
            refreshTokenExpiresAt = try p.optionalDouble("refreshTokenExpiresAt")
            absoluteExpiresAt = try p.optionalDouble("absoluteExpiresAt")
            hasRefreshToken = try p.optionalBool("hasRefreshToken") ?? false
        }

        public func encodeMembers(to w: inout WireWriter) {
            w.field("service", service)
            w.field("account", account)
            w.field("providerKind", providerKind)
            w.field("userId", userId)
            w.field("state", state)
            w.field("accessTokenExpiresAt", accessTokenExpiresAt)
            w.field("refreshTokenExpiresAt", refreshTokenExpiresAt)
            w.field("absoluteExpiresAt", absoluteExpiresAt)
            w.field("hasRefreshToken", hasRefreshToken)
        }
    }

    /// A login event; the first reply of Watch has kind "watching" and empty names.
    public struct Event: WireCodable, Equatable {
        public var kind: String
        public var service: String
        public var account: String
        public var at: Double

        public init(kind: String, service: String, account: String, at: Double) {
            self.kind = kind
            self.service = service
            self.account = account
            self.at = at
        }

        public init(from p: WireParameters) throws(WireParameterError) {
            kind = try p.string("kind")
            service = try p.string("service")
            account = try p.string("account")
            at = try p.double("at")
        }

        public func encodeMembers(to w: inout WireWriter) {
            w.field("kind", kind)
            w.field("service", service)
            w.field("account", account)
            w.field("at", at)
        }
    }
}

extension WireWriter {
    /// A member whose value is an object written by `value`.
    public mutating func field(_ name: String, _ value: some WireEncodable) {
        key(name)
        beginObject()
        value.encodeMembers(to: &self)
        endObject()
    }

    public mutating func field(_ name: String, _ value: (some WireEncodable)?) {
        if let value { field(name, value) }
    }
}

extension WireParameters {
    /// A required member that is an object of type `T`.
    public func decode<T: WireDecodable>(_ name: String, as type: T.Type = T.self) throws(WireParameterError) -> T {
        guard let nested = try nested(name) else { throw WireParameterError(prefix + name, "is missing") }
        return try T(from: nested)
    }

    public func optionalDecode<T: WireDecodable>(_ name: String, as type: T.Type = T.self) throws(WireParameterError) -> T? {
        guard let nested = try nested(name) else { return nil }
        return try T(from: nested)
    }
}
