import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// A usable access token, as AutoLogin and Refresh hand it out.
public struct AccessGrant: Sendable, CustomStringConvertible {
    public let accessToken: SecureBytes
    public let tokenType: String
    /// When the token expires (the assumed lifetime when the provider did not say).
    public let expiresAt: Date
    public let scopes: [String]

    public init(accessToken: SecureBytes, tokenType: String, expiresAt: Date, scopes: [String]) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.scopes = scopes
    }

    init(_ session: LoginSession) {
        self.init(accessToken: session.accessToken, tokenType: session.tokenType,
                  expiresAt: session.effectiveAccessTokenExpiry, scopes: session.scopes)
    }

    public var description: String { "AccessGrant(\(tokenType), expires: \(expiresAt), token: <redacted>)" }
}

/// Why the user must sign in again.
public enum ReauthReason: String, Sendable, Equatable {
    /// No login is stored for this service and account (never saved, logged out, or wiped).
    case noSession
    /// The access token is (nearly) expired and there is no refresh token to renew it.
    case noRefreshToken
    /// The provider refused the refresh token (`invalid_grant`): revoked, expired or reused. The
    /// login was wiped.
    case refreshRejected
    /// The refresh token's own expiry has passed. The login was wiped.
    case refreshTokenExpired
    /// The login's absolute lifetime is over. The login was wiped.
    case lifetimeOver
    /// The answer to a refresh was lost after it may have reached the provider, and so was the
    /// one retry's (or the provider refused the retry): the provider may have rotated the refresh
    /// token, and no request can tell which is current. The login was wiped and its tokens revoked.
    case rotationInDoubt

    /// What to tell the user.
    public var explanation: String {
        switch self {
        case .noSession: return "no login is stored for this app and account"
        case .noRefreshToken: return "the access token expires and the provider gave no refresh token"
        case .refreshRejected: return "the provider no longer accepts this login (the refresh token was revoked, expired or reused)"
        case .refreshTokenExpired: return "the login's refresh token has expired"
        case .lifetimeOver: return "the login reached its maximum lifetime"
        case .rotationInDoubt: return "the provider's answer to a refresh was lost twice, so its refresh token may have changed; the login was ended"
        }
    }
}

/// The answer to "am I still logged in?", one case per thing a client does next.
///
/// ```swift
/// switch try await sessions.autoLogin(key) {
/// case .valid(let grant), .refreshed(let grant): use(grant.accessToken)
/// case .offline(let grant?, _): use(grant.accessToken)   // still valid, provider unreachable
/// case .offline(nil, _): showOfflineScreen()
/// case .reauthRequired: showSignIn()
/// }
/// ```
public enum AutoLoginResult: Sendable, CustomStringConvertible {
    /// The stored access token stays valid for at least `min_valid`; no network call was made.
    case valid(AccessGrant)
    /// The session was refreshed; the new tokens were stored before this answer.
    case refreshed(AccessGrant)
    /// The user must sign in again.
    case reauthRequired(ReauthReason)
    /// The provider could not be reached (or failed with a 5xx). Nothing was deleted; the cached
    /// access token is included only while it is still valid.
    case offline(AccessGrant?, reason: String)

    /// The stable wire name: `valid`, `refreshed`, `reauthRequired`, `offline`.
    public var outcome: String {
        switch self {
        case .valid: return "valid"
        case .refreshed: return "refreshed"
        case .reauthRequired: return "reauthRequired"
        case .offline: return "offline"
        }
    }

    /// The token to use, if any.
    public var grant: AccessGrant? {
        switch self {
        case .valid(let grant), .refreshed(let grant): return grant
        case .offline(let grant, _): return grant
        case .reauthRequired: return nil
        }
    }

    public var description: String { "AutoLoginResult.\(outcome)" }
}

/// What a logout did.
public struct LogoutResult: Sendable, Equatable {
    /// A login was stored and has been wiped (false when there was nothing to wipe: logout is idempotent).
    public var wasLoggedIn: Bool
    /// The provider confirmed the revocation of the login's tokens.
    public var revoked: Bool
    /// The provider could not be reached; the revocation is queued and retried by the daemon.
    public var revocationQueued: Bool
    /// The provider gives clients no way to end a login (Firebase): it was wiped on this machine
    /// only, and its refresh token stays valid at the provider until the provider ends it.
    public var providerCannotRevoke: Bool

    public init(wasLoggedIn: Bool, revoked: Bool, revocationQueued: Bool, providerCannotRevoke: Bool = false) {
        self.wasLoggedIn = wasLoggedIn
        self.revoked = revoked
        self.revocationQueued = revocationQueued
        self.providerCannotRevoke = providerCannotRevoke
    }
}
