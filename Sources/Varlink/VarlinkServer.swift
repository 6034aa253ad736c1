import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A varlink service on a Unix stream socket.
///
/// ```swift
/// let server = VarlinkServer(info: info, interfaces: [VaultInterface(vault)], logger: logger)
/// try await server.bind(unixSocketPath: "/run/user/1000/sortedvault.sock")
/// // ...
/// try await server.shutdown()
/// ```
///
/// The server reads each peer's uid, gid and pid from the kernel (``PeerCredentials``), enforces
/// the limits of ``VarlinkServerConfiguration``, answers `org.varlink.service` itself, and logs
/// method names and peer ids only, never parameters. It does not decide who may call what: check
/// `context.peer` in your interfaces, and refuse strangers outright with
/// ``VarlinkServerConfiguration/admit``.
public final class VarlinkServer: Sendable {
    private struct State: Sendable {
        var listeners: [any Channel] = []
        var createdSocketPaths: [String] = []
        var connections: [ObjectIdentifier: any Channel] = [:]
        var limiter: ConnectionLimiter
        var isShutDown = false
    }

    private let dispatcher: VarlinkDispatcher
    private let configuration: VarlinkServerConfiguration
    private let logger: Logger
    private let group: any EventLoopGroup
    private let state: Mutex<State>

    public init(info: VarlinkServiceInfo, interfaces: [any VarlinkInterface], configuration: VarlinkServerConfiguration = .init(), logger: Logger) {
        self.dispatcher = VarlinkDispatcher(info: info, interfaces: interfaces, logger: logger)
        self.configuration = configuration
        self.logger = logger
        self.group = MultiThreadedEventLoopGroup.singleton
        self.state = Mutex(State(limiter: ConnectionLimiter(maxTotal: configuration.maxConnections, maxPerUID: configuration.maxConnectionsPerUID)))
    }

    /// The number of connections currently open (refused ones are not counted).
    public var connectionCount: Int {
        state.withLock { $0.connections.count }
    }

    /// Binds a new Unix socket at `unixSocketPath` with mode 0600, and starts serving.
    ///
    /// A stale socket file left by a crashed server is replaced; a socket with a live server
    /// behind it, or a file that is not a socket, makes this throw ``VarlinkServerError``.
    /// The umask is set process-wide for the duration of the bind, so that the socket is never
    /// reachable by others, not even between `bind` and `chmod`: do not create files on other
    /// threads while binding.
    public func bind(unixSocketPath path: String) async throws {
        try checkNotShutDown()
        try removeStaleSocket(at: path)
        let previousMask = umask(0o177)
        let listener: any Channel
        do {
            listener = try await makeBootstrap().bind(unixDomainSocketPath: path).get()
            umask(previousMask)
        } catch {
            umask(previousMask)
            throw VarlinkServerError.bindFailed(path, error)
        }
        chmod(path, 0o600)
        try register(listener, createdPath: path)
        logger.info("Listening", metadata: ["socket": .string(path)])
    }

    /// Serves on an already-listening socket descriptor, such as one passed by systemd socket
    /// activation (`LISTEN_FDS`, usually descriptor 3). The server takes ownership of it.
    public func adopt(listeningDescriptor descriptor: CInt) async throws {
        try checkNotShutDown()
        let listener: any Channel
        do {
            listener = try await makeBootstrap().withBoundSocket(descriptor).get()
        } catch {
            throw VarlinkServerError.adoptFailed(descriptor, error)
        }
        try register(listener, createdPath: nil)
        logger.info("Listening on an inherited descriptor", metadata: ["fd": "\(descriptor)"])
    }

    /// Stops accepting, closes every connection (cancelling handlers still running), and
    /// removes the socket files ``bind(unixSocketPath:)`` created.
    public func shutdown() async throws {
        let (listeners, connections, paths) = state.withLock { state in
            state.isShutDown = true
            defer {
                state.listeners = []
                state.createdSocketPaths = []
            }
            return (state.listeners, Array(state.connections.values), state.createdSocketPaths)
        }
        for listener in listeners {
            try? await listener.close()
        }
        for connection in connections {
            try? await connection.close()
        }
        for path in paths {
            unlink(path)
        }
    }

    private func checkNotShutDown() throws {
        if state.withLock({ $0.isShutDown }) { throw VarlinkServerError.shutDown }
    }

    private func register(_ listener: any Channel, createdPath: String?) throws {
        let accepted = state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            state.listeners.append(listener)
            if let createdPath { state.createdSocketPaths.append(createdPath) }
            return true
        }
        if !accepted {
            listener.close(promise: nil)
            if let createdPath { unlink(createdPath) }
            throw VarlinkServerError.shutDown
        }
    }

    private func removeStaleSocket(at path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw VarlinkServerError.pathOccupied(path) }
        do {
            let probe = try VarlinkConnection(unixSocketPath: path, timeout: .seconds(1))
            probe.close()
            throw VarlinkServerError.socketInUse(path)
        } catch VarlinkClientError.unreachable {
            unlink(path)
        }
    }

    private func makeBootstrap() -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .childChannelOption(ChannelOptions.autoRead, value: false)
            // A client may send its requests and shut down its writing side; it still gets its replies.
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [self] channel in
                self.initializeConnection(channel)
            }
    }

    private func initializeConnection(_ channel: any Channel) -> EventLoopFuture<Void> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.close()
        }
        let credentials: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.flatMapThrowing { ucred in
            let peer = PeerCredentials(ucred)
            let id = ObjectIdentifier(channel)
            let pipeline = channel.pipeline.syncOperations
            guard self.configuration.admit(peer) else {
                try pipeline.addHandler(ConnectionRefusalHandler(reason: .permissionDenied))
                return
            }
            let admitted = self.state.withLock { state -> Bool in
                guard !state.isShutDown, state.limiter.admit(uid: peer.uid) else { return false }
                state.connections[id] = channel
                return true
            }
            guard admitted else {
                self.logger.notice("Refusing connection over the limit", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
                try pipeline.addHandler(ConnectionRefusalHandler())
                return
            }
            channel.closeFuture.whenComplete { _ in
                self.state.withLock { state in
                    if state.connections.removeValue(forKey: id) != nil {
                        state.limiter.release(uid: peer.uid)
                    }
                }
            }
            try pipeline.addHandler(VarlinkConnectionHandler(
                dispatcher: self.dispatcher, configuration: self.configuration, peer: peer, allocator: channel.allocator))
        }
    }
}
