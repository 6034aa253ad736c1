import NIOConcurrencyHelpers
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
        /// Connections admitted or released since start: a settling round that saw either is followed
        /// by another (a connection admitted during a burst may be one whose client already left).
        var changes = 0
        var isShutDown = false
    }

    private let dispatcher: VarlinkDispatcher
    private let configuration: VarlinkServerConfiguration
    private let logger: Logger
    private let group: any EventLoopGroup
    private let state: NIOLockedValueBox<State>
    private let liveHandlers = LiveHandlerCount()
    private let accepted = Atomic<Int>(0)

    public init(info: VarlinkServiceInfo, interfaces: [any VarlinkInterface], configuration: VarlinkServerConfiguration = .init(), logger: Logger) {
        self.dispatcher = VarlinkDispatcher(info: info, interfaces: interfaces, logger: logger)
        self.configuration = configuration
        self.logger = logger
        self.group = MultiThreadedEventLoopGroup.singleton
        self.state = NIOLockedValueBox(State(limiter: ConnectionLimiter(ConnectionLimiter.Limits(configuration))))
    }

    /// The number of connections currently open (refused ones are not counted).
    public var connectionCount: Int {
        state.withLockedValue { $0.connections.count }
    }

    /// The number of connections taken from the socket's backlog since start, served or refused (for
    /// tests: a client's closed connections may wait there after its `close`).
    var acceptedConnections: Int { accepted.load(ordering: .acquiring) }

    /// The number of served connections whose handler is still in memory: open ones, and closed ones
    /// not yet freed (for tests: it must come back to zero).
    var liveConnectionHandlers: Int { liveHandlers.value }

    /// Binds a new Unix socket at `unixSocketPath` with mode 0600, and starts serving.
    ///
    /// A stale socket file left by a crashed server is replaced; a socket with a live server
    /// behind it, or a file that is not a socket, makes this throw ``VarlinkServerError``.
    /// The socket gets its mode before `bind` creates the file (`fchmod` of the unbound socket,
    /// which Linux applies at `bind`), so it is never reachable by others. The process umask is
    /// left alone: it is shared by every thread, and changing it around a bind gave the children
    /// other threads spawned meanwhile a umask of 0177, or left it set for good when two binds overlapped.
    public func bind(unixSocketPath path: String) async throws {
        try checkNotShutDown()
        try removeStaleSocket(at: path)
        let listener: any Channel
        do {
            let descriptor = try Self.boundPrivateSocket(at: path)
            do {
                listener = try await makeBootstrap().withBoundSocket(descriptor).get()
            } catch {
                unlink(path)
                throw error
            }
        } catch {
            throw VarlinkServerError.bindFailed(path, error)
        }
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
        let (listeners, connections, paths) = state.withLockedValue { state in
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
        if state.withLockedValue({ $0.isShutDown }) { throw VarlinkServerError.shutDown }
    }

    private func register(_ listener: any Channel, createdPath: String?) throws {
        let accepted = state.withLockedValue { state -> Bool in
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

    /// A close-on-exec Unix stream socket bound at `path` with mode 0600, not yet listening (so
    /// nobody can connect before the server does). Closed on failure.
    private static func boundPrivateSocket(at path: String) throws -> CInt {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw IOError(errnoCode: ENAMETOOLONG, reason: "bind")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        let bound = fchmod(fd, 0o600) == 0 && withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
        guard bound else {
            let code = errno
            close(fd)
            throw IOError(errnoCode: code, reason: "bind")
        }
        return fd
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
            // Frames carry secrets: every buffer of a connection is zeroed before its memory is released.
            .childChannelOption(ChannelOptions.allocator, value: .zeroing)
            .childChannelInitializer { [self] channel in
                self.initializeConnection(channel)
            }
    }

    private func initializeConnection(_ channel: any Channel) -> EventLoopFuture<Void> {
        accepted.add(1, ordering: .releasing)
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.close()
        }
        let credentials: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.flatMap { ucred in
            let peer = PeerCredentials(ucred, readingGroups: self.configuration.readsGroups())
            if peer.executableWasDeleted {
                self.logger.notice("Refusing a process whose executable was deleted", metadata: [
                    "uid": "\(peer.uid)", "pid": "\(peer.pid)", "exe": "\(peer.executable ?? "?")",
                ])
                return self.addHandlers([ConnectionRefusalHandler(reason: .executableChanged)], to: channel)
            }
            guard self.configuration.admit(peer) else {
                return self.addHandlers([ConnectionRefusalHandler(reason: .permissionDenied)], to: channel)
            }
            if self.count(channel, from: peer) == nil {
                return self.serve(channel, peer: peer)
            }
            // Over a limit: first let the connections whose clients already hung up notice it and
            // free their slots, so that a client that closes and reconnects is judged fairly.
            return self.settleClosedConnections(on: channel.eventLoop).flatMap {
                if let refusal = self.count(channel, from: peer) {
                    self.logger.notice("Refusing connection over the limit", metadata: [
                        "limit": .string(refusal.rawValue), "uid": "\(peer.uid)", "pid": "\(peer.pid)",
                        "exe": "\(peer.executable ?? "?")",
                    ])
                    return self.addHandlers([ConnectionRefusalHandler()], to: channel)
                }
                return self.serve(channel, peer: peer)
            }
        }
    }

    /// Counts `channel` against the limits; returns the limit it would exceed instead.
    private func count(_ channel: any Channel, from peer: PeerCredentials) -> ConnectionLimiter.Refusal? {
        state.withLockedValue { state -> ConnectionLimiter.Refusal? in
            guard !state.isShutDown else { return .total }
            if let refusal = state.limiter.admit(peer) { return refusal }
            state.connections[ObjectIdentifier(channel)] = channel
            state.changes += 1
            return nil
        }
    }

    private func serve(_ channel: any Channel, peer: PeerCredentials) -> EventLoopFuture<Void> {
        let id = ObjectIdentifier(channel)
        channel.closeFuture.whenComplete { _ in
            self.state.withLockedValue { state in
                if state.connections.removeValue(forKey: id) != nil {
                    state.limiter.release(peer)
                    state.changes += 1
                }
            }
        }
        return addHandlers(VarlinkConnectionHandler.pipeline(
            dispatcher: dispatcher, configuration: configuration, peer: peer, allocator: channel.allocator,
            liveToken: liveHandlers.token()), to: channel)
    }

    /// Adds `handlers` to the pipeline; call on the channel's event loop.
    private func addHandlers(_ handlers: [any ChannelHandler], to channel: any Channel) -> EventLoopFuture<Void> {
        do {
            try channel.pipeline.syncOperations.addHandlers(handlers)
            return channel.eventLoop.makeSucceededVoidFuture()
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    /// Lets every event loop make an I/O pass, one round after the other, until a round in which no
    /// connection was admitted or released (at least three rounds, at most a hundred: a burst of
    /// connections closed before they were accepted keeps admitting and releasing for a while).
    /// A connection whose client had closed before this was called has then read its end of input
    /// (I/O pass), closed, and released its slot (a task of its own on its loop).
    ///
    /// Each round is a task scheduled a millisecond ahead rather than submitted: an event loop runs
    /// every task submitted while it drains its queue before polling again, so a chain of
    /// submitted tasks could finish without any I/O pass in between.
    private func settleClosedConnections(on eventLoop: any EventLoop, round: Int = 0) -> EventLoopFuture<Void> {
        var loops: [any EventLoop] = []
        for loop in group.makeIterator() { loops.append(loop) }
        let before = state.withLockedValue { $0.changes }
        let passes = loops.map { $0.scheduleTask(in: .milliseconds(1)) {}.futureResult }
        return EventLoopFuture.andAllComplete(passes, on: eventLoop).flatMap {
            let changed = self.state.withLockedValue { $0.changes } != before
            guard round < 99, changed || round < 2 else { return eventLoop.makeSucceededVoidFuture() }
            return self.settleClosedConnections(on: eventLoop, round: round + 1)
        }
    }
}
