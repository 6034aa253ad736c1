import CoreMetrics
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import VaultCore
import VaultCrypto

/// Keeps OAuth2 logins alive: answers "am I still logged in?" at once from the stored access token,
/// refreshes it (one request per login, however many callers ask at once) when it is about to
/// expire, wipes a login that can no longer be renewed, and logs out with revocation at the provider.
///
/// ```swift
/// let sessions = SessionManager(store: vault, transport: HTTPClientTransport(), clock: SystemClock())
/// try await sessions.save(try TokenResponse(json: signInAnswer), provider: provider, for: key)
/// switch try await sessions.autoLogin(key) { … }
/// ```
///
/// The rules it keeps:
/// - New tokens are stored durably before any caller is answered, so a rotated refresh token is never lost.
/// - Only `invalid_grant` (after re-reading the store) or the end of a login's lifetime deletes a
///   login; a network failure or a 5xx deletes nothing and holds the background work back with
///   jitter. A client asking is never held back beyond ``SessionConfiguration/clientRetryFloor``.
/// - No lock is held across the network (see ``RefreshFlight``): a logout wipes at once, and a
///   refresh that answers after it is discarded. Changes to one login run under its key lock
///   (``keyLocks``); what the manager remembers between calls is ``LoginRecords``, one lock with
///   no I/O under it, so a call runs on its caller's task and never waits for another login's.
/// - One refresh per login across every manager sharing the store: each request is made under the
///   store's refresh lease (``LoginLeases``), and a refresh whose lease was overtaken is discarded.
/// - Proactive refresh is shared too: each login is written with the time it is due
///   (``DueRefreshes``), and the background work claims due logins with their lease, whichever
///   manager wrote them.
/// - "Now" comes from the injected clock; the only sleep is a wait for another manager's refresh,
///   on the injected `sleeper`. The daemon drives proactive refresh by calling ``runDueWork()`` at
///   ``nextWakeUp()``.
///
/// Managers share a store's leases only through one ``DueRefreshes``: pass a store that offers them
/// (PostgreSQL), or one ``LocalLoginLeases`` to every manager in the process. Any other store gets
/// a lease table of its own, so two managers over a bare store refresh independently.
public final class SessionManager: Sendable {
    /// How the manager refreshes, retries and revokes (``SessionConfiguration``).
    public typealias Configuration = SessionConfiguration

    /// The store, with its refresh lease and due times: every read and write of logins goes through it.
    let store: any DueRefreshes
    /// Queues and sends revocations, through the store's own ``RevocationOutbox`` or a
    /// ``LocalRevocationOutbox`` over ``store``.
    let revocations: RevocationSender
    /// The store's immediate read, for ``autoLoginNow(_:)``.
    let readsNow: (any TokenStoreReadingNow)?
    /// Who this manager is in the store's leases.
    let leaseOwner: String
    /// What a wait for another manager's refresh sleeps on.
    let sleeper: any Clock<Duration>
    let oauth: OAuthClient
    let clock: any VaultClock
    public let configuration: Configuration
    let random: @Sendable () -> Double
    let logger: Logger
    let metrics: SessionMetrics
    /// How the daemon's log names a login's service (the access log's pseudonym); never the name
    /// itself by default, since the log lies on disk in plaintext.
    let logName: @Sendable (String) -> String

    /// One holder per login at a time: every change to one login's stored record — save, the read
    /// and the write of a refresh, logout — runs under its key. The key is never held across the
    /// network: a refresh re-reads the login under the key before applying the provider's answer, so
    /// it never overwrites a newer sign-in or brings back a logged-out login, and a logout never
    /// waits for a slow provider.
    let keyLocks = KeyedLock<ItemKey>()
    /// The refresh under way per login (``RefreshFlight``), joined by every caller.
    let flights = SingleFlight<ItemKey, Result<AutoLoginResult, any Error>>()
    /// What the manager knows of logins between calls, and the writes a failed store left in memory.
    let records: LoginRecords
    /// Every read and write of a login's record.
    let logins: StoredLogins
    /// Verifies `oidc` logins (``useOpenID(_:)``), at sign-in and after each refresh.
    let openIDLogins: OpenIDLogins
    /// The sign-ins begun and not yet completed.
    let signIns: SignInFlows

    /// - Parameters:
    ///   - store: where logins live; a store that is not a ``LoginLeases`` gets a ``LocalLoginLeases`` of its own.
    ///     A ``LoginLeases`` must also be a ``DueRefreshes``: its leases are what due refreshes are claimed with.
    ///   - random: numbers in 0..<1 for jitter; tests pass a fixed sequence.
    ///   - sleeper: what a wait for another manager's refresh sleeps on; tests pass a `ManualSleepClock`.
    ///   - metrics: where refresh outcomes, fenced commits and the store's backlog are reported
    ///     (`SessionMetrics.swift`); the process's bootstrapped factory unless given.
    /// - Throws: `.invalidArgument` when ``SessionConfiguration/refreshLease`` is shorter than twice the
    ///   transport's ``OAuthTransport/requestDeadline``.
    public init(store: any TokenStore, transport: any OAuthTransport, clock: any VaultClock,
                configuration: Configuration = Configuration(),
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                sleeper: any Clock<Duration> = ContinuousClock(),
                logger: Logger = Logger(label: "sortedvault.session"),
                logName: @escaping @Sendable (String) -> String = { _ in "<private>" },
                metrics: any MetricsFactory = MetricsSystem.factory) throws {
        let deadline = transport.requestDeadline
        guard deadline > 0, configuration.refreshLease >= 2 * deadline else {
            throw VaultError.invalidArgument(
                "the refresh lease (\(configuration.refreshLease) s) must last at least twice the provider request deadline (\(deadline) s), so a refresh still waiting for its answer is never overtaken; lengthen the lease or shorten the deadline")
        }
        guard configuration.leaseRecheck > 0 else {
            throw VaultError.invalidArgument("the lease recheck interval must be longer than 0 seconds")
        }
        let leases: any DueRefreshes
        if let shared = store as? any DueRefreshes {
            leases = shared
        } else if store is any LoginLeases {
            throw VaultError.invalidArgument("this store has refresh leases but no due refreshes (DueRefreshes); it cannot be shared by session managers")
        } else {
            leases = LocalLoginLeases(wrapping: store, clock: clock)
        }
        self.store = leases
        self.readsNow = store as? any TokenStoreReadingNow
        self.leaseOwner = "manager-" + SecureRandomID.hex(SecureRandomID.make())
        self.sleeper = sleeper
        self.logName = logName
        let oauth = OAuthClient(transport: transport)
        self.oauth = oauth
        let openIDLogins = OpenIDLogins(logger: logger)
        self.openIDLogins = openIDLogins
        self.signIns = SignInFlows(oauth: oauth, clock: clock, sleeper: sleeper, deviceFlow: configuration.deviceFlow, openID: openIDLogins)
        let schedule = ScheduleSignal()
        let revocations = RevocationSender(
            outbox: (store as? any RevocationOutbox) ?? LocalRevocationOutbox(wrapping: leases, clock: clock),
            oauth: oauth, clock: clock, configuration: configuration, random: random, logger: logger, schedule: schedule)
        self.revocations = revocations
        self.clock = clock
        self.configuration = configuration
        self.random = random
        self.logger = logger
        let records = LoginRecords(clock: clock, configuration: configuration, random: random, schedule: schedule)
        self.records = records
        let sessionMetrics = SessionMetrics(factory: metrics)
        self.metrics = sessionMetrics
        self.logins = StoredLogins(store: leases, records: records, revocations: revocations, flights: flights, metrics: sessionMetrics)
    }

    // MARK: Sign-in

    /// Stores a new login from the token response the client got at sign-in, replacing any login
    /// under the same key.
    @discardableResult
    public func save(_ response: TokenResponse, provider: OAuthProvider, for key: ItemKey,
                     maximumLifetime: TimeInterval? = nil) async throws -> SessionStatus {
        if let maximumLifetime, !(maximumLifetime > 0 && maximumLifetime <= 10 * 365 * 86400) {
            throw VaultError.invalidArgument("the maximum lifetime must be between 1 second and 10 years")
        }
        return try await storeSignIn(try await openIDLogins.verifiedSignIn(response, provider: provider), provider: provider, for: key,
                                     maximumLifetime: maximumLifetime)
    }

    /// Stores a verified sign-in answer: the one write of every new login (Save and a sign-in the
    /// manager ran alike).
    func storeSignIn(_ response: TokenResponse, provider: OAuthProvider, for key: ItemKey,
                     maximumLifetime: TimeInterval?) async throws -> SessionStatus {
        try await withKeyLock(key) {
            let now = clock.now
            let session = LoginSession(signIn: response, provider: provider, at: now, maximumLifetime: maximumLifetime)
            if let reason = session.endReason(at: now) {
                throw VaultError.invalidArgument("this login has already ended (\(reason.explanation)); sign in again")
            }
            try await logins.writeNew(session, for: key)
            return SessionStatus(session, now: now, minValid: configuration.minValid, retryNotBefore: nil)
        }
    }

    // MARK: Start-up check and refresh

    /// Refreshes now, whatever the access token's expiry (still one request for concurrent callers),
    /// and ignores the hold-back after transient failures.
    public func refresh(_ key: ItemKey) async throws -> AutoLoginResult {
        try await sharedFlight(key, asker: .forced, validFor: configuration.minValid)
    }

    // MARK: Status

    /// Everything about the login except its secrets. Throws `.notFound` when there is none.
    public func status(_ key: ItemKey) async throws -> SessionStatus {
        guard let session = try await logins.read(key) else {
            throw VaultError(.notFound, "no login is stored for service \(key.service.debugDescription), account \(key.account.debugDescription); sign in")
        }
        return SessionStatus(session, now: clock.now, minValid: configuration.minValid, retryNotBefore: records.retryNotBefore(key))
    }

    // MARK: Key locks

    func withKeyLock<T>(_ key: ItemKey, _ body: () async throws -> T) async throws -> T {
        try await keyLocks.withLock(key, body)
    }
}
