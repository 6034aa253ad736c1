import Foundation
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
/// no authentication. Requests are small and bounded (headers 8 KiB, no body), one connection
/// answers one request at a time, and a connection idle for ``idleTimeout`` is closed. Bound in
/// start-up, so a taken port stops the daemon with an error naming the setting; served until the
/// daemon's graceful shutdown.
struct MetricsServer: Service {
    let channel: any Channel
    let endpoint: MetricsEndpoint
    let logger: Logger

    static let idleTimeout: TimeAmount = .seconds(30)

    /// Binds `endpoint`. `beforeScrape` runs before each answer (the session manager sets its store
    /// gauges there, so a scrape sees what `fleet status` would say now).
    static func bind(_ endpoint: MetricsEndpoint, registry: PrometheusCollectorRegistry,
                     beforeScrape: @escaping @Sendable () async -> Void, logger: Logger) async throws -> MetricsServer {
        let scrape: @Sendable () async -> [UInt8] = {
            await beforeScrape()
            return registry.emitToBuffer()
        }
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 16)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelInitializer { channel in
                var limits = NIOHTTPDecoderLimitConfiguration()
                limits.maxHeaderFieldSize = MetricsHTTPHandler.maxHeaderBytes
                limits.maxHeaderListSize = MetricsHTTPHandler.maxHeaderBytes
                limits.maxHeaderFieldCount = 64
                return channel.pipeline.configureHTTPServerPipeline(withDecoderLimitConfiguration: limits).flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandlers([
                        IdleStateHandler(allTimeout: idleTimeout),
                        MetricsHTTPHandler(scrape: scrape),
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
