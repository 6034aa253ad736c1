import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
import Varlink
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession
import CLICore

/// The login API of the daemon (`org.sortedvault.session`) for Swift apps: save the token response
/// once at sign-in, then ask ``autoLogin(_:)`` at every start.
///
/// ```swift
/// let sessions = SessionClient(socketPath: try CLILocation().resolve().socket)
/// switch try await sessions.autoLogin(try ItemKey(service: "com.sorted.api", account: "ada")) {
/// case .valid(let grant), .refreshed(let grant): api.token = grant.accessToken
/// case .offline(let grant, _): grant.map { api.token = $0.accessToken } ?? showOffline()
/// case .reauthRequired: showSignIn()
/// }
/// ```
///
/// It is the daemon's ``LoginService``; `VaultLogin` (product `SortedVault`) is the short way in.
///
/// Errors are the same `VaultError` codes as everywhere: `.locked`, `.permissionDenied`,
/// `.unavailable` (no daemon), `.notFound` (Status of a login that is not there), `.providerRejected`.
public final class SessionClient: LoginService {
    let client: VaultClient

    /// How long a call waits for the daemon unless told: longer than the daemon takes to answer
    /// (``SessionDeadlines``).
    public static let defaultTimeout = SessionDeadlines.clientWait

    /// Calls run on `threadPool` (NIO's shared one unless given), as ``VaultClient``'s do; a
    /// ``watch(service:account:)`` uses it only to connect.
    public init(socketPath: String, timeout: Duration = SessionClient.defaultTimeout, threadPool: NIOThreadPool = .singleton) {
        client = VaultClient(socketPath: socketPath, timeout: timeout, threadPool: threadPool)
    }

    /// Stores the login from the provider's token response (RFC 6749 §5.1 JSON object).
    @discardableResult
    public func save(tokenResponse: [String: JSONValue], provider: OAuthProvider, for key: ItemKey,
                     maximumLifetime: Int? = nil) async throws -> SessionStatus {
        try await save(tokenResponse: tokenResponse, provider: ProviderSettings(provider), for: key, maximumLifetime: maximumLifetime)
    }

    /// Stores the login from the provider's sign-in answer, for any provider kind:
    ///
    /// ```swift
    /// // A Supabase app, right after supabase.auth.signInWithPassword:
    /// try await sessions.save(tokenResponse: session, provider: ProviderSettings(kind: .supabase,
    ///     url: URL(string: "https://abc.supabase.co"), apiKey: anonKey), for: key)
    /// ```
    @discardableResult
    public func save(tokenResponse: [String: JSONValue], provider: ProviderSettings, for key: ItemKey,
                     maximumLifetime: Int? = nil) async throws -> SessionStatus {
        let request = SessionInterface.Save.Request(service: key.service, account: key.account, tokenResponse: tokenResponse,
                                                    provider: .init(provider), maxLifetimeSeconds: maximumLifetime.map { Int64($0) })
        return SessionStatus(wire: try await send(SessionInterface.Save.self, request).session)
    }

    /// Stores the login from the JSON text of the provider's answer, as it sent it (what
    /// `sortedvault session save` reads from standard input). Its tokens go from the text into secure
    /// memory and onto the wire without ever being a `String`.
    @discardableResult
    public func save(tokenResponseJSON json: SecureBytes, provider: ProviderSettings, for key: ItemKey,
                     maximumLifetime: Int? = nil) async throws -> SessionStatus {
        let request: SessionInterface.Save.Request
        do {
            request = try json.withUnsafeBytes { raw in
                try SessionInterface.Save.Request(service: key.service, account: key.account, tokenResponseJSON: raw,
                                                  provider: .init(provider), maxLifetimeSeconds: maximumLifetime.map { Int64($0) })
            }
        } catch let error as WireParameterError {
            throw VaultError.invalidArgument("the token response cannot be sent: \(error.reason)")
        }
        return SessionStatus(wire: try await send(SessionInterface.Save.self, request).session)
    }

    /// "Am I still logged in?"
    public func autoLogin(_ key: ItemKey) async throws -> AutoLoginResult {
        try AutoLoginResult(wire: try await autoLogin(SessionInterface.AutoLogin.Request(key)))
    }

    /// Refreshes now, whatever the access token's expiry.
    public func refresh(_ key: ItemKey) async throws -> AutoLoginResult {
        try AutoLoginResult(wire: try await refresh(SessionInterface.Refresh.Request(key)))
    }

    /// Wipes the login and revokes it at the provider (queued when offline). Idempotent.
    public func logout(_ key: ItemKey) async throws -> LogoutResult {
        let reply = try await logout(SessionInterface.Logout.Request(key))
        return LogoutResult(wasLoggedIn: reply.wasLoggedIn, revoked: reply.revoked, revocationQueued: reply.revocationQueued,
                            providerCannotRevoke: reply.providerCannotRevoke)
    }

    /// Logs out every login of `service` (policy operation `fleet.revoke`), each as ``logout(_:)`` does.
    public func logoutAll(service: String) async throws -> BulkLogoutResult {
        BulkLogoutResult(wire: try await fleetRevoke(SessionInterface.FleetRevoke.Request(service: service)))
    }

    /// The revocation backlog, the logins in doubt and the data keys in use of the daemon's store
    /// (policy operation `fleet.status`).
    public func fleetStatus() async throws -> FleetStatus {
        FleetStatus(wire: try await fleetStatus(SessionInterface.FleetStatus.Request()))
    }

    /// Re-encrypts the fleet's store under a new data key (policy operation `fleet.rewrap`); a
    /// daemon whose store has no data keys answers `Unsupported`. `batchSize`: the daemon's default when nil.
    public func rewrapDataKeys(batchSize: Int? = nil) async throws -> DataKeyRewrap {
        DataKeyRewrap(wire: try await fleetRewrap(SessionInterface.FleetRewrap.Request(batchSize: batchSize.map(Int64.init))))
    }

    /// The login's state as the daemon reports it (never tokens).
    public func status(_ key: ItemKey) async throws -> SessionStatus {
        SessionStatus(wire: try await status(SessionInterface.Status.Request(key)).session)
    }

    /// The logins this client may see under the daemon's policy (`session.list`), of one service
    /// when given: names, user ids, states and expiries, never tokens.
    public func list(service: String? = nil) async throws -> [SessionListEntry] {
        try await list(SessionInterface.List.Request(service: service)).logins.map(SessionListEntry.init(wire:))
    }

}

/// Every method of `org.sortedvault.session` as a typed stub (``SessionInterfaceCaller``, generated
/// from the interface file); the methods above turn their replies into the API's types.
extension SessionClient: SessionInterfaceCaller {
    public func send<M: VarlinkMethod & SendableMetatype>(_ method: M.Type, _ request: M.Request) async throws -> M.Reply {
        try await client.call(M.self, request, decodeError: SessionWireError.decode)
    }
}
