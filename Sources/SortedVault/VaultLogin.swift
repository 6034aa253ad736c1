import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto
import VaultSession

/// One login (a service and an account) of a ``LoginService``: the daemon's, from
/// ``SortedVault/login(service:account:)``, or an in-process `SessionManager` in tests.
///
/// ```swift
/// let login = try SortedVault.login(service: "com.sorted.api", account: "ada")
/// let token = try await login.accessToken(minValid: 60)   // throws SortedVaultError.signInAgain or .offline
/// ```
///
/// ``autoLogin()`` gives the four outcomes underneath, ``grant(minValid:)`` the token in secure
/// memory. Do not keep the `String` of ``accessToken(minValid:)`` around: ask again, it is cheap
/// (no network call while the token stays valid).
public struct VaultLogin: Sendable {
    public let key: ItemKey
    public let sessions: any LoginService
    /// "Now", for ``grant(minValid:)``'s check of the token's remaining life.
    public let clock: any VaultClock
    /// What ``signIn(provider:scopes:timeout:opener:)`` waits on for its timeout: a test passes
    /// `VaultTesting`'s `ManualSleepClock` (mirrored by the `ManualClock` given as `clock`).
    public let sleeper: any Clock<Duration>

    /// The login of `service` and `account` (names checked here: `.invalidArgument`).
    public init(service: String, account: String, in loginService: any LoginService, clock: any VaultClock = SystemClock(),
                sleeper: any Clock<Duration> = ContinuousClock()) throws {
        key = try ItemKey(service: service, account: account)
        sessions = loginService
        self.clock = clock
        self.sleeper = sleeper
    }

    /// An access token valid for at least `minValid` seconds, as text for an `Authorization` header.
    /// Throws ``SortedVaultError/signInAgain(_:)`` or ``SortedVaultError/offline(reason:)``.
    public func accessToken(minValid: TimeInterval = 60) async throws -> String {
        try await grant(minValid: minValid).accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The token of ``accessToken(minValid:)`` in secure memory, with its type, expiry and scopes.
    ///
    /// AutoLogin answers with the stored token while it stays valid for the service's own
    /// `min_valid`; when the caller asks for more than the token has left, this refreshes once. A
    /// provider whose tokens live less than `minValid` gets its fresh token as it is (asking again
    /// could not do better).
    public func grant(minValid: TimeInterval = 60) async throws -> AccessGrant {
        var result = try await sessions.autoLogin(key)
        if case .valid(let grant) = result, !lasts(grant, minValid) {
            result = try await sessions.refresh(key)
        }
        switch result {
        case .valid(let grant), .refreshed(let grant):
            return grant
        case .offline(let grant?, _) where lasts(grant, minValid):
            return grant
        case .offline(_, let reason):
            throw SortedVaultError.offline(reason: reason)
        case .reauthRequired(let reason):
            throw SortedVaultError.signInAgain(reason)
        }
    }

    private func lasts(_ grant: AccessGrant, _ minValid: TimeInterval) -> Bool {
        grant.expiresAt.timeIntervalSince(clock.now) >= minValid
    }

    /// "Am I still logged in?", with the four outcomes (``AutoLoginResult``).
    public func autoLogin() async throws -> AutoLoginResult {
        try await sessions.autoLogin(key)
    }

    /// Stores the login from the JSON text of the provider's sign-in answer, as it sent it.
    @discardableResult
    public func save(tokenResponseJSON json: SecureBytes, provider: ProviderSettings, maximumLifetime: Int? = nil) async throws -> SessionStatus {
        try await sessions.save(tokenResponseJSON: json, provider: provider, for: key, maximumLifetime: maximumLifetime)
    }

    /// The login's state, never its tokens; nil when none is stored.
    public func status() async throws -> SessionStatus? {
        do {
            return try await sessions.status(key)
        } catch let error as VaultError where error.code == .notFound {
            return nil
        }
    }

    /// Wipes the login here and revokes it at the provider (queued when offline). Idempotent.
    @discardableResult
    public func logout() async throws -> LogoutResult {
        try await sessions.logout(key)
    }

    /// The login's state, then each change, until the caller stops iterating. Subscribed before
    /// the state is read, so no change in between is missed (one may show twice). Throws what the
    /// watch throws: `.unavailable` when the daemon goes away.
    ///
    /// ```swift
    /// for try await event in login.events {
    ///     switch event {
    ///     case .current(let status?): show(status)
    ///     case .current(nil): showSignIn()
    ///     case .changed(let change) where change.kind == .loggedOut: showSignIn()
    ///     case .changed: break
    ///     }
    /// }
    /// ```
    public var events: AsyncThrowingStream<LoginEvent, any Error> {
        let login = self
        return AsyncThrowingStream(bufferingPolicy: .bufferingNewest(256)) { continuation in
            let task = Task {
                do {
                    let changes = try await login.sessions.watch(service: login.key.service, account: login.key.account)
                    continuation.yield(.current(try await login.status()))
                    for try await event in changes { continuation.yield(.changed(event)) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
