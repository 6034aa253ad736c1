import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// The login API, wherever the logins are kept: the daemon over its socket (`SessionClient`) or a
/// ``SessionManager`` in this process. Code written against it runs unchanged in an app's tests
/// over an in-memory store, a scripted provider and a manual clock (VaultTesting):
///
/// ```swift
/// let service: any LoginService = SessionManager(store: InMemoryTokenStore(clock: clock),
///                                                transport: ScriptedOAuthTransport(), clock: clock)
/// let login = VaultLogin(service: "com.sorted.api", account: "ada", in: service, clock: clock)
/// ```
///
/// Errors are `VaultError`s with the same codes from both: `.notFound` (Status of a login that is
/// not there), `.locked`, `.permissionDenied`, `.unavailable` (no daemon), `.providerRejected`.
public protocol LoginService: Sendable {
    /// Stores the login from the JSON text of the provider's sign-in answer, as it sent it, replacing
    /// any login under `key`; `maximumLifetime` (seconds) ends it that long after sign-in.
    @discardableResult
    func save(tokenResponseJSON json: SecureBytes, provider: ProviderSettings, for key: ItemKey,
              maximumLifetime: Int?) async throws -> SessionStatus
    /// "Am I still logged in?": the stored token while it stays valid for the service's `minValid`,
    /// else a refresh (one for all concurrent callers), else why not.
    func autoLogin(_ key: ItemKey) async throws -> AutoLoginResult
    /// Refreshes now, whatever the access token's expiry.
    func refresh(_ key: ItemKey) async throws -> AutoLoginResult
    /// Wipes the login and revokes it at the provider (queued when offline). Idempotent.
    func logout(_ key: ItemKey) async throws -> LogoutResult
    /// The login's state, never its tokens; `.notFound` when none is stored.
    func status(_ key: ItemKey) async throws -> SessionStatus
    /// The stored logins (of one service when given), never their tokens.
    func list(service: String?) async throws -> [SessionListEntry]
    /// What happens to the logins (of one service or one login when given) from now on. It returns
    /// once the subscription holds, so nothing that happens after it returns is missed; the stream
    /// ends when the caller stops iterating it, and throws when the daemon goes away.
    func watch(service: String?, account: String?) async throws -> AsyncThrowingStream<SessionEvent, any Error>
    /// Begins a sign-in the service runs: it makes and keeps the state, the PKCE verifier and the
    /// nonce; the caller opens the answer's URL (or shows its device code). Only this user may
    /// complete or cancel it.
    func beginSignIn(_ request: SignInRequest) async throws -> SignInStart
    /// Completes the sign-in with the redirect's query (after `?`; empty for a device sign-in, which
    /// waits for the user's approval) and stores the login. `.callbackMismatch`: the query is not
    /// this sign-in's, nothing changed and it still waits; any other error ended it.
    func completeSignIn(_ flowID: String, callbackQuery: SecureBytes) async throws -> SignInResult
    /// Ends the sign-in (nothing is stored); false when there was none.
    @discardableResult
    func cancelSignIn(_ flowID: String) async throws -> Bool
}
