extension SessionInterface {
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
