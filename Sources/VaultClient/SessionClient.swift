import Dispatch
import Foundation
import Varlink
import VaultCore
import VaultCrypto
import VaultProtocol
import VaultSession

/// The login API of the daemon (`org.sortedvault.session`) for Swift apps: save the token response
/// once at sign-in, then ask ``autoLogin(_:)`` at every start.
///
/// ```swift
/// let sessions = SessionClient(socketPath: try VaultPaths.standard().socket)
/// switch try await sessions.autoLogin(try ItemKey(service: "com.sorted.api", account: "ada")) {
/// case .valid(let grant), .refreshed(let grant): api.token = grant.accessToken
/// case .offline(let grant, _): grant.map { api.token = $0.accessToken } ?? showOffline()
/// case .reauthRequired: showSignIn()
/// }
/// ```
///
/// Errors are the same `VaultError` codes as everywhere: `.locked`, `.permissionDenied`,
/// `.unavailable` (no daemon), `.notFound` (Status of a login that is not there), `.providerRejected`.
public final class SessionClient: Sendable {
    private let client: VaultClient

    public init(socketPath: String, timeout: Duration = .seconds(30)) {
        client = VaultClient(socketPath: socketPath, timeout: timeout)
    }

    /// Stores the login from the provider's token response (RFC 6749 §5.1 JSON object).
    @discardableResult
    public func save(tokenResponse: [String: JSONValue], provider: OAuthProvider, for key: ItemKey,
                     maximumLifetime: Int? = nil) async throws -> [String: JSONValue] {
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
                     maximumLifetime: Int? = nil) async throws -> [String: JSONValue] {
        var parameters = Self.keyParameters(key)
        parameters["tokenResponse"] = .object(tokenResponse)
        parameters["provider"] = SessionWireFormat.encode(provider)
        if let maximumLifetime { parameters["maxLifetimeSeconds"] = .int(Int64(maximumLifetime)) }
        let reply = try await call("Save", parameters)
        guard let session = reply["session"]?.objectValue else { throw malformed("Save") }
        return session
    }

    /// "Am I still logged in?"
    public func autoLogin(_ key: ItemKey) async throws -> AutoLoginResult {
        try SessionWireFormat.decodeAutoLogin(try await call("AutoLogin", Self.keyParameters(key)))
    }

    /// Refreshes now, whatever the access token's expiry.
    public func refresh(_ key: ItemKey) async throws -> AutoLoginResult {
        try SessionWireFormat.decodeAutoLogin(try await call("Refresh", Self.keyParameters(key)))
    }

    /// Wipes the login and revokes it at the provider (queued when offline). Idempotent.
    public func logout(_ key: ItemKey) async throws -> LogoutResult {
        let reply = try await call("Logout", Self.keyParameters(key))
        return LogoutResult(wasLoggedIn: reply["wasLoggedIn"]?.boolValue ?? false, revoked: reply["revoked"]?.boolValue ?? false,
                            revocationQueued: reply["revocationQueued"]?.boolValue ?? false,
                            providerCannotRevoke: reply["providerCannotRevoke"]?.boolValue ?? false)
    }

    /// The login's state as the daemon reports it (never tokens).
    public func status(_ key: ItemKey) async throws -> [String: JSONValue] {
        guard let session = try await call("Status", Self.keyParameters(key))["session"]?.objectValue else { throw malformed("Status") }
        return session
    }

    /// The logins this client may see under the daemon's policy (`session.list`), of one service
    /// when given: names, user ids, states and expiries, never tokens.
    public func list(service: String? = nil) async throws -> [SessionListEntry] {
        var parameters: [String: JSONValue] = [:]
        if let service { parameters["service"] = .string(service) }
        return try SessionWireFormat.decodeList(try await call("List", parameters))
    }

    /// Streams login events until `onEvent` returns false or the daemon goes away. Blocks the
    /// calling thread: run it on a thread of its own. The first event has kind "watching".
    public func watchBlocking(service: String? = nil, account: String? = nil,
                              onEvent: ((kind: String, service: String, account: String, at: Date)) throws -> Bool) throws {
        var parameters: [String: JSONValue] = [:]
        if let service { parameters["service"] = .string(service) }
        if let account { parameters["account"] = .string(account) }
        let connection: VarlinkConnection
        do {
            connection = try VarlinkConnection(unixSocketPath: client.socketPath, timeout: .seconds(365 * 86400))
        } catch let error as VarlinkClientError {
            throw VaultClient.vaultError(error, socketPath: client.socketPath)
        }
        defer { connection.close() }
        do {
            try connection.callMore(SessionInterfaceDescription.name + ".Watch", parameters) { reply in
                try onEvent(try SessionWireFormat.decodeEvent(reply["event"]))
            }
        } catch let error as VarlinkError {
            throw SessionWireFormat.decode(error)
        } catch let error as VarlinkClientError {
            throw VaultClient.vaultError(error, socketPath: client.socketPath)
        }
    }

    private func call(_ member: String, _ parameters: [String: JSONValue]) async throws -> [String: JSONValue] {
        try await client.call(method: SessionInterfaceDescription.name + "." + member, parameters, decodeError: SessionWireFormat.decode)
    }

    private static func keyParameters(_ key: ItemKey) -> [String: JSONValue] {
        ["service": .string(key.service), "account": .string(key.account)]
    }

    private func malformed(_ what: String) -> VaultError {
        VaultError.storageFailure("the daemon sent a malformed \(what) reply")
    }
}
