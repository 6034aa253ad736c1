import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// One signed-in login: the tokens an OAuth2 provider issued, when they expire, and how to refresh
/// and revoke them. Typed, not a blob; stored sealed as one vault item, so every change to it (a
/// refresh that rotates the refresh token) is one atomic write.
///
/// Tokens and the client secret stay in ``SecureBytes``; `description` never shows them.
public struct LoginSession: Sendable, CustomStringConvertible {
    public var accessToken: SecureBytes
    public var refreshToken: SecureBytes?
    public var idToken: SecureBytes?
    public var tokenType: String
    public var scopes: [String]
    /// When the access token expires; nil when the provider did not say (see ``effectiveAccessTokenExpiry``).
    public var accessTokenExpiresAt: Date?
    /// When the refresh token expires, where the provider said.
    public var refreshTokenExpiresAt: Date?
    /// The end of the login's absolute lifetime: after it the user must sign in again, whatever the tokens say.
    public var absoluteExpiresAt: Date?
    /// When the current access token was issued.
    public var issuedAt: Date
    /// When the user signed in (the first save); kept across refreshes.
    public var signedInAt: Date
    /// When the tokens were last refreshed; nil until the first refresh.
    public var lastRefreshedAt: Date?
    public var userID: String?
    public var provider: OAuthProvider
    /// Random, made at sign-in and kept across refreshes: tells this login apart from a later one
    /// under the same service and account.
    public var loginID: [UInt8]

    /// How long an access token is assumed to live when the provider gave no `expires_in`.
    public static let assumedAccessTokenLifetime: TimeInterval = 3600

    /// A new login from the token response the client got at sign-in.
    public init(signIn response: TokenResponse, provider: OAuthProvider, at now: Date, maximumLifetime: TimeInterval? = nil) {
        accessToken = response.accessToken
        refreshToken = response.refreshToken
        idToken = response.idToken
        tokenType = response.tokenType
        scopes = response.scopes ?? []
        accessTokenExpiresAt = response.expiresIn.map { now.addingTimeInterval($0) }
        refreshTokenExpiresAt = response.refreshTokenExpiresIn.map { now.addingTimeInterval($0) }
        absoluteExpiresAt = maximumLifetime.map { now.addingTimeInterval($0) }
        issuedAt = now
        signedInAt = now
        lastRefreshedAt = nil
        userID = response.userID
        self.provider = provider
        loginID = SecureRandomID.make()
    }

    public init(accessToken: SecureBytes, refreshToken: SecureBytes?, idToken: SecureBytes?, tokenType: String, scopes: [String],
         accessTokenExpiresAt: Date?, refreshTokenExpiresAt: Date?, absoluteExpiresAt: Date?, issuedAt: Date,
         signedInAt: Date, lastRefreshedAt: Date?, userID: String?, provider: OAuthProvider, loginID: [UInt8]) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.tokenType = tokenType
        self.scopes = scopes
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.refreshTokenExpiresAt = refreshTokenExpiresAt
        self.absoluteExpiresAt = absoluteExpiresAt
        self.issuedAt = issuedAt
        self.signedInAt = signedInAt
        self.lastRefreshedAt = lastRefreshedAt
        self.userID = userID
        self.provider = provider
        self.loginID = loginID
    }

    /// The same login after a refresh (RFC 6749 §6): a refresh token the provider did not rotate is
    /// kept, and so are scopes and the id token it did not resend.
    public func refreshed(with response: TokenResponse, at now: Date) -> LoginSession {
        var next = self
        next.accessToken = response.accessToken
        next.tokenType = response.tokenType
        next.accessTokenExpiresAt = response.expiresIn.map { now.addingTimeInterval($0) }
        if let rotated = response.refreshToken {
            next.refreshToken = rotated
            next.refreshTokenExpiresAt = response.refreshTokenExpiresIn.map { now.addingTimeInterval($0) }
        } else if let expiresIn = response.refreshTokenExpiresIn {
            next.refreshTokenExpiresAt = now.addingTimeInterval(expiresIn)
        }
        if let scopes = response.scopes { next.scopes = scopes }
        if let idToken = response.idToken { next.idToken = idToken }
        if let userID = response.userID { next.userID = userID }
        next.issuedAt = now
        next.lastRefreshedAt = now
        return next
    }

    /// When the access token stops working: its stated expiry, or the assumed lifetime after issue.
    public var effectiveAccessTokenExpiry: Date {
        accessTokenExpiresAt ?? issuedAt.addingTimeInterval(Self.assumedAccessTokenLifetime)
    }

    /// Whether the login may be answered as it is: it has not ended, and its access token stays
    /// valid for at least `minValid` after `now`. The one rule for "still valid for min_valid".
    public func isValid(at now: Date, forAtLeast minValid: TimeInterval) -> Bool {
        endReason(at: now) == nil && accessTokenIsValid(at: now, forAtLeast: minValid)
    }

    /// Whether the access token stays valid for at least `seconds` after `now`.
    public func accessTokenIsValid(at now: Date, forAtLeast seconds: TimeInterval = 0) -> Bool {
        effectiveAccessTokenExpiry.timeIntervalSince(now) >= max(seconds, 0) && effectiveAccessTokenExpiry > now
    }

    /// When the whole login ends and is wiped: the absolute lifetime, and the refresh token's expiry
    /// (or, with no refresh token, the access token's, since nothing can renew it).
    public var endsAt: Date? {
        let tokenEnd = refreshToken != nil ? refreshTokenExpiresAt : effectiveAccessTokenExpiry
        switch (absoluteExpiresAt, tokenEnd) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    }

    /// Why this login is over at `now`, or nil while it lives.
    func endReason(at now: Date) -> ReauthReason? {
        if let absoluteExpiresAt, now >= absoluteExpiresAt { return .lifetimeOver }
        if refreshToken != nil, let refreshTokenExpiresAt, now >= refreshTokenExpiresAt { return .refreshTokenExpired }
        if refreshToken == nil, now >= effectiveAccessTokenExpiry { return .noRefreshToken }
        return nil
    }

    public var description: String {
        "LoginSession(type: \(tokenType), expires: \(accessTokenExpiresAt.map { "\($0)" } ?? "?"), refreshToken: \(refreshToken == nil ? "none" : "<redacted>"))"
    }
}

enum SecureRandomID {
    static func make() -> [UInt8] {
        SecureBytes(randomCount: 16).withUnsafeBytes { Array($0) }
    }

    static func hex(_ id: [UInt8]) -> String {
        Hex.text(id)
    }
}
