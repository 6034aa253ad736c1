import FoundationEssentials
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import ServiceLifecycle
import VaultPolicy

#if canImport(Glibc)
import Glibc
#endif

/// The operators' endpoint (`[metrics] listen` in settings.toml): `GET /metrics` answers what the
/// daemon's parts reported through swift-metrics, in Prometheus' text format; anything else is 404.
///
/// ```swift
/// let registry = PrometheusCollectorRegistry()
/// let sessions = try SessionManager(…, metrics: PrometheusMetricsFactory(registry: registry))
/// let server = try await MetricsServer.bind(.tcp(host: "127.0.0.1", port: 9464), registry: registry, …)
/// ```
///
/// It binds loopback addresses and Unix sockets only (the settings refuse others): it has no TLS and
/// no authentication, so on TCP every local user reaches it. What they can spend is bounded: at
/// most ``maxConnections`` connections at once (the next ones are answered 503 and closed, so a
/// flood of connections costs the daemon a handful of descriptors, never its clients' or its
/// providers'), a connection idle for ``idleTimeout`` is closed, requests are small (headers 8 KiB,
/// no body) and answered one at a time, and the store's figures are read at most once every
/// ``StoreFigureCache/interval`` whatever the scrape rate. Requests naming another `Host` are
/// refused (``MetricsHostCheck``). Bound in start-up, so a taken port stops the daemon with an
/// error naming the setting; served until the daemon's graceful shutdown.
struct MetricsServer: Service {
    let channel: any Channel
    let endpoint: MetricsEndpoint
    let logger: Logger

    /// Prometheus holds one connection per target; a few more leave room for a person with curl.
    static let maxConnections = 8
    static let idleTimeout: TimeAmount = .seconds(5)

    /// Binds `endpoint`. `beforeScrape` runs before each answer (the daemon reads the store's
    /// figures there when they are older than ``StoreFigureCache/interval``).
    static func bind(_ endpoint: MetricsEndpoint, registry: PrometheusCollectorRegistry,
                     beforeScrape: @escaping @Sendable () async -> Void, logger: Logger) async throws -> MetricsServer {
        let scrape: @Sendable () async -> [UInt8] = {
            await beforeScrape()
            return registry.emitToBuffer()
        }
        let hosts = MetricsHostCheck(endpoint)
        let slots = ConnectionSlots(maxConnections)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 16)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelInitializer { channel in
                guard slots.take() else {
                    return channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(MetricsRefusal()) }
                }
                channel.closeFuture.whenComplete { _ in slots.give() }
                var limits = NIOHTTPDecoderLimitConfiguration()
                limits.maxHeaderFieldSize = MetricsHTTPHandler.maxHeaderBytes
                limits.maxHeaderListSize = MetricsHTTPHandler.maxHeaderBytes
                limits.maxHeaderFieldCount = 64
                return channel.pipeline.configureHTTPServerPipeline(withDecoderLimitConfiguration: limits).flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandlers([
                        IdleStateHandler(allTimeout: idleTimeout),
                        MetricsHTTPHandler(hosts: hosts, scrape: scrape),
                    ])
                }
            }
        let channel: any Channel
        do {
            switch endpoint {
            case let .tcp(host, port):
                channel = try await bootstrap.bind(host: host, port: port).get()
            case let .unixSocket(path):
                if isServed(path) {
                    throw DaemonError("refusing to start: another process serves metrics at \(endpoint) ([metrics] listen); give each daemon its own socket path, or stop the other")
                }
                // A socket file left by a daemon that crashed is replaced; a file that is not a socket is refused.
                channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            }
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError("refusing to start: the metrics endpoint ([metrics] listen = \"\(endpoint)\") cannot listen: \(error); choose a free port or another socket path, or remove [metrics]")
        }
        return MetricsServer(channel: channel, endpoint: endpoint, logger: logger)
    }

    /// Whether something accepts connections at the Unix socket `path` now (a live endpoint, not a
    /// stale file): binding there would take it from its owner.
    private static func isServed(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    func run() async throws {
        logger.info("serving metrics", metadata: ["listen": "\(endpoint)"])
        try? await gracefulShutdown()
        await close()
    }

    /// Stops listening and removes a Unix socket file this server made.
    func close() async {
        try? await channel.close()
        if case let .unixSocket(path) = endpoint { unlink(path) }
    }
}
