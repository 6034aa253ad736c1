import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Everything about a login except its secrets: what `Status` reports.
public struct SessionStatus: Sendable, Equatable {
    /// `valid` (the access token lives past `min_valid`), `refreshDue` (it does not, a refresh
    /// token will renew it), `expired` (the access token is dead, a refresh token will renew it)
    /// or `reauthRequired` (nothing can renew it).
    public var state: String
    /// The login's ``ProviderKind`` (`oauth2`, `oidc`, `firebase`, `supabase`).
    public var providerKind: String
    public var tokenType: String
    public var scopes: [String]
    public var accessTokenExpiresAt: Date
    public var refreshTokenExpiresAt: Date?
    public var absoluteExpiresAt: Date?
    public var hasRefreshToken: Bool
    public var hasIDToken: Bool
    public var issuedAt: Date
    public var signedInAt: Date
    public var lastRefreshedAt: Date?
    public var userID: String?
    public var tokenEndpoint: String
    public var revocationEndpoint: String?
    public var clientID: String
    public var clientAuthentication: String
    public var hasClientSecret: Bool
    /// When the next refresh attempt may be made after transient failures, if it is held back.
    public var retryNotBefore: Date?

    /// A status as reported elsewhere (the daemon's `Status` reply, read by `SessionClient`).
    public init(state: String, providerKind: String, tokenType: String, scopes: [String], accessTokenExpiresAt: Date,
                refreshTokenExpiresAt: Date?, absoluteExpiresAt: Date?, hasRefreshToken: Bool, hasIDToken: Bool, issuedAt: Date,
                signedInAt: Date, lastRefreshedAt: Date?, userID: String?, tokenEndpoint: String, revocationEndpoint: String?,
                clientID: String, clientAuthentication: String, hasClientSecret: Bool, retryNotBefore: Date?) {
        self.state = state
        self.providerKind = providerKind
        self.tokenType = tokenType
        self.scopes = scopes
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.refreshTokenExpiresAt = refreshTokenExpiresAt
        self.absoluteExpiresAt = absoluteExpiresAt
        self.hasRefreshToken = hasRefreshToken
        self.hasIDToken = hasIDToken
        self.issuedAt = issuedAt
        self.signedInAt = signedInAt
        self.lastRefreshedAt = lastRefreshedAt
        self.userID = userID
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.clientID = clientID
        self.clientAuthentication = clientAuthentication
        self.hasClientSecret = hasClientSecret
        self.retryNotBefore = retryNotBefore
    }

    init(_ session: LoginSession, now: Date, minValid: TimeInterval, retryNotBefore: Date?) {
        if session.isValid(at: now, forAtLeast: minValid) {
            state = "valid"
        } else if session.refreshToken == nil || session.endReason(at: now) != nil {
            state = "reauthRequired"
        } else {
            state = session.accessTokenIsValid(at: now) ? "refreshDue" : "expired"
        }
        providerKind = session.provider.kind.rawValue
        tokenType = session.tokenType
        scopes = session.scopes
        accessTokenExpiresAt = session.effectiveAccessTokenExpiry
        refreshTokenExpiresAt = session.refreshTokenExpiresAt
        absoluteExpiresAt = session.absoluteExpiresAt
        hasRefreshToken = session.refreshToken != nil
        hasIDToken = session.idToken != nil
        issuedAt = session.issuedAt
        signedInAt = session.signedInAt
        lastRefreshedAt = session.lastRefreshedAt
        userID = session.userID
        tokenEndpoint = session.provider.tokenEndpoint.absoluteString
        revocationEndpoint = session.provider.revocationEndpoint?.absoluteString
        clientID = session.provider.clientID
        clientAuthentication = session.provider.clientAuthentication.rawValue
        hasClientSecret = session.provider.clientSecret != nil
        self.retryNotBefore = retryNotBefore
    }
}
