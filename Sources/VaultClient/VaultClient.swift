import Dispatch
import Foundation
import Synchronization
import Varlink
import VaultCore
import VaultCrypto
import VaultProtocol

/// A `TokenStore` that talks to the sortedvault daemon over its Unix socket: the client library for
/// Swift apps. It passes the same conformance suite as the in-process stores.
///
/// ```swift
/// let vault = try VaultClient(socketPath: VaultPaths.standard().socket)
/// let token = try await vault.retrieve(service: "com.sorted.api", account: "ada").secret
/// ```
///
/// The connection is opened on first use and reopened after the daemon restarts. Errors come back as
/// the same `VaultError` codes an in-process store throws; a missing daemon is `.unavailable`.
/// Socket I/O runs on the client's own serial queue, never on Swift's cooperative threads, so a
/// slow daemon cannot starve the caller's other tasks (or an in-process daemon).
public final class VaultClient: TokenStore, LockableStore {
    let socketPath: String
    private let timeout: Duration
    private let connection = Mutex<VarlinkConnection?>(nil)
    private let io = DispatchQueue(label: "sortedvault.client")

    public init(socketPath: String, timeout: Duration = .seconds(30)) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    // MARK: TokenStore

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try validateSecret(secret)
        var parameters: [String: JSONValue] = [
            "service": .string(key.service), "account": .string(key.account),
            "secret": .string(secret.base64EncodedString()),
        ]
        if let label = options.label { parameters["label"] = .string(label) }
        if !options.attributes.isEmpty { parameters["attributes"] = .object(options.attributes.mapValues { .string($0) }) }
        if let expires = options.expiresAt { parameters["expires"] = .double(expires.timeIntervalSince1970) }
        _ = try await call("Store", parameters)
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        let reply = try await call("Retrieve", ["service": .string(key.service), "account": .string(key.account)])
        guard let encoded = reply["secret"]?.stringValue, let secret = SecureBytes(base64Encoded: encoded),
              let item = reply["item"] else {
            throw VaultError.storageFailure("the daemon sent a malformed Retrieve reply")
        }
        return RetrievedItem(metadata: try ItemWireFormat.decode(item), secret: secret)
    }

    public func delete(_ key: ItemKey) async throws {
        _ = try await call("Delete", ["service": .string(key.service), "account": .string(key.account)])
    }

    public func list(service: String?) async throws -> [ItemMetadata] {
        let reply = try await call("List", service.map { ["service": .string($0)] } ?? [:])
        guard let items = reply["items"]?.arrayValue else {
            throw VaultError.storageFailure("the daemon sent a malformed List reply")
        }
        return try items.map(ItemWireFormat.decode)
    }

    // MARK: Vault state

    public var isLocked: Bool {
        get async { (try? await status().locked) ?? true }
    }

    public func lock() async {
        try? await lockVault()
    }

    /// Locks the daemon's vault, reporting failures (`lock()` cannot throw: `LockableStore` says so).
    public func lockVault() async throws {
        _ = try await call("Lock", [:])
    }

    /// Unlocks the daemon's vault with a passphrase.
    public func unlock(passphrase: SecureBytes) async throws {
        let text = passphrase.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        _ = try await call("Unlock", ["passphrase": .string(text)])
    }

    /// Asks the daemon to unlock the vault from its key file or desktop keyring again (after a lock
    /// or an auto-lock). `.locked` says why none did; `.invalidArgument`: the vault has only a passphrase.
    public func unlockFromKeySources() async throws {
        _ = try await call("Unlock", [:])
    }

    /// Re-wraps the vault key under a new passphrase.
    public func changePassphrase(from old: SecureBytes, to new: SecureBytes) async throws {
        let oldText = old.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let newText = new.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        _ = try await call("ChangePassphrase", ["old": .string(oldText), "new": .string(newText)])
    }

    /// The daemon's state.
    public func status() async throws -> VaultStatus {
        let reply = try await call("Status", [:])
        return VaultStatus(
            locked: reply["locked"]?.boolValue ?? true,
            keySources: reply["keySources"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            items: Int(reply["items"]?.intValue ?? 0),
            logins: reply["logins"]?.intValue.map { Int($0) },
            queuedRevocations: reply["queuedRevocations"]?.intValue.map { Int($0) },
            version: reply["version"]?.stringValue ?? "?",
            autoLockMinutes: Int(reply["autoLockMinutes"]?.intValue ?? 0))
    }

    /// Sends one call on the I/O queue and maps error replies to `VaultError`.
    func call(_ member: String, _ parameters: [String: JSONValue]) async throws -> [String: JSONValue] {
        try await call(method: VaultInterfaceDescription.name + "." + member, parameters, decodeError: VaultWireError.decode)
    }

    /// Sends one call of any of the daemon's interfaces; `decodeError` maps its error replies.
    func call(method: String, _ parameters: [String: JSONValue],
              decodeError: @escaping @Sendable (VarlinkError) -> VaultError) async throws -> [String: JSONValue] {
        try await withCheckedThrowingContinuation { continuation in
            io.async {
                continuation.resume(with: Result { try self.blockingCall(method, parameters, decodeError: decodeError) })
            }
        }
    }

    /// Sends one call, reconnecting once if the daemon went away since the last call.
    private func blockingCall(_ method: String, _ parameters: [String: JSONValue],
                              decodeError: (VarlinkError) -> VaultError) throws -> [String: JSONValue] {
        try connection.withLock { connection in
            for attempt in 0..<2 {
                do {
                    if connection == nil { connection = try VarlinkConnection(unixSocketPath: socketPath, timeout: timeout) }
                    return try connection!.call(method, parameters)
                } catch let error as VarlinkError {
                    throw decodeError(error)
                } catch let error as VarlinkClientError {
                    connection?.close()
                    connection = nil
                    if attempt == 0, case .connectionClosed = error { continue }
                    throw Self.vaultError(error, socketPath: socketPath)
                }
            }
            throw VaultError(.unavailable, "the daemon closed the connection twice; check its log")
        }
    }

    static func vaultError(_ error: VarlinkClientError, socketPath: String) -> VaultError {
        switch error {
        case .unreachable:
            return VaultError(.unavailable, "no sortedvault daemon answers at \(socketPath): start it with `sortedvault daemon`")
        case .permissionDenied:
            return VaultError(.permissionDenied, "not allowed to connect to \(socketPath): the daemon belongs to another user")
        case .timedOut:
            return VaultError(.unavailable, "the daemon at \(socketPath) did not answer in time")
        case .connectionClosed:
            // A daemon that refuses a program answers PermissionDenied before closing; a bare close
            // means it stopped or crashed mid-call.
            return VaultError(.unavailable, "the daemon at \(socketPath) closed the connection before answering: it stopped or crashed; check its log and try again")
        case let .protocolViolation(detail):
            return VaultError(.storageFailure, "the daemon at \(socketPath) broke the protocol: \(detail)")
        }
    }
}

/// What `Status` reports.
public struct VaultStatus: Sendable, Equatable, Codable {
    public var locked: Bool
    public var keySources: [String]
    /// What the caller may list (every stored record while the vault is locked).
    public var items: Int
    /// Stored logins and queued revocations: sortedvault's own records; nil while locked.
    public var logins: Int?
    public var queuedRevocations: Int?
    public var version: String
    public var autoLockMinutes: Int
}
