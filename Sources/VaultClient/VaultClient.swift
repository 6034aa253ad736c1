import FoundationEssentials
import NIOPosix
import Synchronization
import Varlink
#if canImport(Glibc)
import Glibc
#endif
import VaultAPI
import VaultCore
import VaultCrypto
import CLICore

/// A `TokenStore` that talks to the sortedvault daemon over its Unix socket: the client library for
/// Swift apps. It passes the same conformance suite as the in-process stores.
///
/// ```swift
/// let vault = try VaultClient(socketPath: CLILocation().resolve().socket)
/// let token = try await vault.retrieve(service: "com.sorted.api", account: "ada").secret
/// ```
///
/// The connection is opened on first use and reopened after the daemon restarts. Errors come back as
/// the same `VaultError` codes an in-process store throws; a missing daemon is `.unavailable`.
/// The calls are the lean CLI's blocking ones (`WireConnection`: one framing, one reply parser),
/// run on `threadPool` (by default NIO's shared `NIOThreadPool.singleton`), never on Swift's
/// cooperative threads, so a slow daemon cannot starve the caller's other tasks (or an in-process
/// daemon).
///
/// One call at a time, in the order they were made, by turns of a ``KeyedLock``: they share one
/// connection, and a call waiting for it must wait as a suspended task, not as a pool thread blocked
/// on the connection's lock (a slow daemon would otherwise hold as many of the pool's threads as there
/// are callers). A caller cancelled while waiting for its turn leaves without sending its call.
public final class VaultClient: TokenStore, LockableStore {
    let socketPath: String
    let timeout: Duration
    private let connection = Locked<WireConnection?>(nil)
    let threadPool: NIOThreadPool
    private let turns = KeyedLock<Turn>()
    private enum Turn: Hashable { case call }

    public init(socketPath: String, timeout: Duration = .seconds(30), threadPool: NIOThreadPool = .singleton) {
        self.socketPath = socketPath
        self.timeout = timeout
        self.threadPool = threadPool
    }

    // MARK: TokenStore

    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try await store(secret, for: key, options: options, keepingStored: false)
    }

    /// Stores `secret`; with `keepingStored`, a replaced item keeps its label, attributes and expiry
    /// where `options` gives none.
    public func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions, keepingStored: Bool) async throws {
        try validateSecret(secret)
        var request = VaultInterface.Store.Request(key: key, secret: secret, options: options)
        if keepingStored { request.keep = true }
        _ = try await store(request)
    }

    public func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        let reply = try await retrieve(VaultInterface.Retrieve.Request(key))
        return RetrievedItem(metadata: try ItemMetadata(wire: reply.item), secret: reply.secret)
    }

    public func delete(_ key: ItemKey) async throws {
        _ = try await delete(VaultInterface.Delete.Request(key))
    }

    /// Whether the item exists, without reading its secret.
    public func exists(_ key: ItemKey) async throws -> Bool {
        try await exists(VaultInterface.Exists.Request(key)).exists
    }

        public func list(service: String?) async throws -> [ItemMetadata] {
        try await list(VaultInterface.List.Request(service: service)).items.map(ItemMetadata.init(wire:))
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
        _ = try await lock(VaultInterface.Lock.Request())
    }

    /// Unlocks the daemon's vault with a passphrase: its exact bytes (base64 on the wire), UTF-8 or not.
    public func unlock(passphrase: SecureBytes) async throws {
        _ = try await unlock(VaultInterface.Unlock.Request(passphrase: passphrase))
    }

    /// Asks the daemon to unlock the vault from its key file or desktop keyring again (after a lock
    /// or an auto-lock). `.locked` says why none did; `.invalidArgument`: the vault has only a passphrase.
    public func unlockFromKeySources() async throws {
        _ = try await unlock(VaultInterface.Unlock.Request(passphrase: nil))
    }

    /// Re-wraps the vault key under a new passphrase.
    public func changePassphrase(from old: SecureBytes, to new: SecureBytes) async throws {
        _ = try await changePassphrase(VaultInterface.ChangePassphrase.Request(old: old, new: new))
    }

    /// The daemon's state.
    /// The logs' service pseudonyms (`private:…`) this caller may resolve, with their names.
    public func logNames() async throws -> [String: String] {
        try await logNames(VaultInterface.LogNames.Request()).names
    }

    public func status() async throws -> VaultStatus {
        let reply = try await status(VaultInterface.Status.Request())
        return VaultStatus(locked: reply.locked, keySources: reply.keySources, items: Int(reply.items),
                           logins: reply.logins.map { Int($0) }, queuedRevocations: reply.queuedRevocations.map { Int($0) },
                           version: reply.version, autoLockMinutes: Int(reply.autoLockMinutes),
                           pid: reply.pid.map { Int($0) }, uptimeSeconds: reply.uptimeSeconds.map { Int($0) },
                           policyFiles: reply.policyFiles, policyReloads: reply.policyReloads.map { Int($0) },
                           policyError: reply.policyError, accessLogFailedWrites: reply.accessLogFailedWrites.map { Int($0) })
    }

    /// Sends one typed call of any of the daemon's interfaces on the pool, in turn; `decodeError` maps
    /// its error replies (by default those of `org.sortedvault.vault`).
    func call<M: VarlinkMethod & SendableMetatype>(_ method: M.Type, _ request: M.Request,
                                decodeError: @escaping @Sendable (String, [String: JSONValue]) -> VaultError = VaultWireError.decode) async throws -> M.Reply {
        try await turns.withLock(.call) {
            try await threadPool.runIfActive { try self.blockingCall(M.self, request, decodeError: decodeError) }
        }
    }

    /// Sends one call, reconnecting once if the daemon went away since the last call.
    private func blockingCall<M: VarlinkMethod>(_ method: M.Type, _ request: M.Request,
                                                decodeError: (String, [String: JSONValue]) -> VaultError) throws -> M.Reply {
        let frame = VarlinkWire.encodeCall(M.self, request)
        return try connection.withLock { connection in
            for attempt in 0..<2 {
                do {
                    if connection == nil { connection = try Self.connect(socketPath, timeout: timeout) }
                    return try Self.exchange(M.self, frame, on: connection!, errors: decodeError)
                } catch let error as VarlinkClientError {
                    connection = nil
                    if attempt == 0, case .connectionClosed = error { continue }
                    throw Self.vaultError(error, socketPath: socketPath)
                } catch let error as WireReplyError {
                    connection = nil
                    throw VaultError.storageFailure("the daemon at \(socketPath) sent a \(error.description)")
                }
            }
            throw VaultError(.unavailable, "the daemon closed the connection twice; check its log")
        }
    }

    /// Opens a connection to this user's daemon: one whose socket ``SocketTrust`` accepts, checked
    /// before anything is sent.
    static func connect(_ socketPath: String, timeout: Duration) throws(VarlinkClientError) -> WireConnection {
        do throws(ConnectFailure) {
            return try WireConnection(path: socketPath, timeoutSeconds: max(1, Int(timeout.components.seconds)))
        } catch {
            switch error {
            case .unreachable(let code) where code == EACCES || code == EPERM: throw .permissionDenied(path: socketPath)
            case .unreachable(let code): throw .unreachable(path: socketPath, reason: String(cString: strerror(code)))
            case .untrusted(let reason): throw .untrustedPeer(path: socketPath, reason: reason)
            }
        }
    }

    /// One call and its one reply, typed: throws what `errors` makes of an error reply, `WireReplyError`
    /// for a reply that does not fit the method, `VarlinkClientError` for no reply.
    static func exchange<M: VarlinkMethod>(_ method: M.Type, _ frame: WireBytes, on connection: WireConnection,
                                           errors: (String, [String: JSONValue]) -> VaultError) throws -> M.Reply {
        switch try decode(M.self, try receive(frame, on: connection)) {
        case .reply(let value, let continues):
            if continues { throw WireReplyError("a continuing reply to a call without more") }
            return value
        case .error(let name, let parameters):
            throw errors(name, parameters)
        }
    }

    /// Sends `frame` (when given) and reads the next reply frame.
    static func receive(_ frame: WireBytes?, on connection: WireConnection) throws(VarlinkClientError) -> WipedBuffer {
        do throws(TransportFailure) {
            if let frame { try connection.send(frame) }
            return try connection.receiveFrame()
        } catch {
            switch error {
            case .timedOut: throw .timedOut
            case .closed: throw .connectionClosed
            case .protocolViolation(let detail): throw .protocolViolation(detail)
            }
        }
    }

    /// The reply frame, typed; throws `WireReplyError` for one that does not fit the method.
    static func decode<M: VarlinkMethod>(_ method: M.Type, _ reply: WipedBuffer) throws -> VarlinkWire.Reply<M.Reply> {
        try reply.withUnsafeBytes { try VarlinkWire.decodeReply(M.self, frame: $0) }
    }

    static func vaultError(_ error: VarlinkClientError, socketPath: String) -> VaultError {
        switch error {
        case .unreachable:
            return VaultError(.unavailable, "no sortedvault daemon answers at \(socketPath): start it with `sortedvault daemon`")
        case .permissionDenied:
            return VaultError(.permissionDenied, "not allowed to connect to \(socketPath): the daemon belongs to another user")
        case .untrustedPeer(_, let reason):
            return VaultError(.permissionDenied, SocketTrust.refusal(path: socketPath, reason: reason))
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
    /// The daemon's process, how long it has run, the rule files in force, how many reloads were
    /// tried and why the last one kept the old policy (nil from a daemon that does not say).
    public var pid: Int?
    public var uptimeSeconds: Int?
    public var policyFiles: [String]?
    public var policyReloads: Int?
    public var policyError: String?
    /// Access-log lines the daemon could not write since it started (nil: it logs to the journal,
    /// or does not say).
    public var accessLogFailedWrites: Int? = nil
}

/// Every method of `org.sortedvault.vault` as a typed stub (``VaultInterfaceCaller``, generated
/// from the interface file); the methods above turn their replies into the API's types.
extension VaultClient: VaultInterfaceCaller {
    public func send<M: VarlinkMethod & SendableMetatype>(_ method: M.Type, _ request: M.Request) async throws -> M.Reply {
        try await call(M.self, request)
    }
}
