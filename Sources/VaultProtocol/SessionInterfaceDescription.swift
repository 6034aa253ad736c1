/// The varlink interface description of `org.sortedvault.session`: the login API contract. It is
/// byte for byte the committed `interfaces/org.sortedvault.session.varlink` (a test keeps them equal).
public enum SessionInterfaceDescription {
    public static let name = "org.sortedvault.session"

    public static let text = #"""
# The sortedvault login API: a client app saves the OAuth2 token response it got
# at sign-in once; from then on AutoLogin answers "am I still logged in?" with a
# valid access token (refreshing it when needed, one provider request however
# many callers ask at once) or says why the user must sign in again. Every call
# is checked against the daemon's access policy (operations session.save,
# session.autologin, session.refresh, session.logout, session.status,
# session.watch, session.list) for the caller's kernel-reported identity.
# Tokens and the client secret are stored encrypted, never logged, and never
# returned by Status or List. Times are seconds since 1970-01-01 UTC. Service
# and account names must be in Unicode NFC (InvalidParameter otherwise) and
# are compared byte for byte.
interface org.sortedvault.session

# Where and how the login is refreshed and revoked. kind: "oauth2" (the
# default), "oidc", "firebase" or "supabase". What each kind needs:
#   oauth2: tokenEndpoint and clientId; revocationEndpoint, clientSecret and
#     clientAuthentication are optional;
#   oidc: issuer and clientId (the endpoints come from the issuer's discovery
#     document); clientSecret and clientAuthentication are optional;
#   firebase: apiKey (the project's Web API key); url is the securetoken base,
#     https://securetoken.googleapis.com unless given (the Auth emulator:
#     http://127.0.0.1:PORT/securetoken.googleapis.com);
#   supabase: url (https://PROJECT.supabase.co) and apiKey (the anon key).
# URLs are https (http only to a loopback address). clientAuthentication:
# "basic" (default) or "post" (client_secret_post); a public client omits
# clientSecret. apiKey and clientSecret are stored encrypted, never returned.
type Provider (
  kind: ?string,
  tokenEndpoint: ?string,
  revocationEndpoint: ?string,
  clientId: ?string,
  clientSecret: ?string,
  clientAuthentication: ?string,
  issuer: ?string,
  url: ?string,
  apiKey: ?string
)

# A usable access token.
type Grant (
  accessToken: string,
  tokenType: string,
  expiresAt: float,
  scopes: []string
)

# A login without its secrets. state: "valid", "refreshDue", "expired" (a
# refresh will renew it) or "reauthRequired". providerKind: the Provider kind.
type SessionState (
  state: string,
  providerKind: string,
  tokenType: string,
  scopes: []string,
  accessTokenExpiresAt: float,
  refreshTokenExpiresAt: ?float,
  absoluteExpiresAt: ?float,
  hasRefreshToken: bool,
  hasIdToken: bool,
  issuedAt: float,
  signedInAt: float,
  lastRefreshedAt: ?float,
  userId: ?string,
  tokenEndpoint: string,
  revocationEndpoint: ?string,
  clientId: string,
  clientAuthentication: string,
  hasClientSecret: bool,
  retryNotBefore: ?float
)

# One login as List shows it: whose it is and its state, never tokens.
# providerKind: the Provider kind it was saved with.
type Login (
  service: string,
  account: string,
  providerKind: string,
  userId: ?string,
  state: string,
  accessTokenExpiresAt: float,
  refreshTokenExpiresAt: ?float,
  absoluteExpiresAt: ?float,
  hasRefreshToken: bool
)

# kind: "saved", "refreshed", "expired", "reauthRequired" or "loggedOut"; the
# first reply of Watch has kind "watching" and empty names.
type Event (kind: string, service: string, account: string, at: float)

# Stores the login from the provider's token response (RFC 6749 section 5.1:
# access_token, token_type, expires_in, refresh_token, scope, id_token; for
# firebase the answer of identitytoolkit's signInWithPassword (idToken,
# refreshToken, expiresIn, localId) or of securetoken), replacing any login
# under the same service and account. maxLifetimeSeconds ends the login that
# long after sign-in, whatever its tokens say. For oidc the id token is
# verified first (signature, iss, aud, exp); a token that fails is refused with
# InvalidParameter and nothing is stored.
method Save(
  service: string,
  account: string,
  tokenResponse: object,
  provider: Provider,
  maxLifetimeSeconds: ?int
) -> (session: SessionState)

# The start-up check. outcome: "valid" (no network call was made), "refreshed"
# (the new tokens were stored before this reply), "reauthRequired" (reason says
# why; the login is wiped where it can never work again) or "offline" (the
# provider is unreachable or did not answer in time: nothing was deleted;
# grant is set only while the cached access token is still valid). A caller is
# never held back by earlier failures beyond a floor of one second: each
# AutoLogin that needs a refresh asks the provider (concurrent callers share one
# request).
method AutoLogin(service: string, account: string) -> (
  outcome: string,
  grant: ?Grant,
  reason: ?string
)

# Refreshes now, whatever the access token's expiry; same reply as AutoLogin.
method Refresh(service: string, account: string) -> (
  outcome: string,
  grant: ?Grant,
  reason: ?string
)

# Wipes the login and ends it at the provider: RFC 7009 revocation (oauth2,
# oidc) when a revocation endpoint is configured, GoTrue's logout of this
# session (supabase); offline, that is queued and retried. Firebase gives
# clients no way to revoke: the login is wiped here only and
# providerCannotRevoke is true. Idempotent: wasLoggedIn is false when there was
# nothing to wipe. It never waits for a refresh under way: that refresh's
# answer is discarded and any tokens it brings are revoked, never stored.
method Logout(service: string, account: string) -> (
  wasLoggedIn: bool,
  revoked: bool,
  revocationQueued: bool,
  providerCannotRevoke: bool
)

# The login's state. Never returns tokens or the client secret.
method Status(service: string, account: string) -> (session: SessionState)

# The stored logins the caller may see (policy operation session.list, matched
# against each login's service), of one service when given, sorted by service
# and account.
method List(service: ?string) -> (logins: []Login)

# Streams events about the logins the caller may watch (call with more: true),
# of one service or one account when given.
method Watch(service: ?string, account: ?string) -> (event: Event)

# No login is stored for that service and account: sign in.
error NoSession (service: string, account: string)

# The vault is locked: unlock it first (org.sortedvault.vault.Unlock).
error Locked ()

# The access policy does not allow this caller to do this.
error PermissionDenied (operation: string, service: ?string)

# A parameter is missing, has the wrong type, or breaks a limit.
error InvalidParameter (parameter: string, reason: string)

# The provider refused for a reason other than a dead refresh token (for
# example invalid_client): fix the saved client settings and sign in again.
error ProviderRejected (error: string, reason: string)

# A stored login failed its integrity check.
error IntegrityFailure (reason: string)

# The store failed; reason says what to do.
error StorageFailure (reason: string)
"""#
}
