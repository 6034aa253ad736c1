import Foundation
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import ServiceLifecycle
import VaultPolicy

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
                channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            }
        } catch {
            throw DaemonError("refusing to start: the metrics endpoint ([metrics] listen = \"\(endpoint)\") cannot listen: \(error); choose a free port or another socket path, or remove [metrics]")
        }
        return MetricsServer(channel: channel, endpoint: endpoint, logger: logger)
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
