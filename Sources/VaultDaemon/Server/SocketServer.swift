import Logging
import ServiceLifecycle
import Varlink

/// The varlink server as a service of the daemon's group: binds the socket (or takes the one
/// systemd passed) and accepts on it until a graceful shutdown, then stops accepting and closes
/// every connection. It is the last service of the group, so a graceful shutdown stops it first: no
/// new call arrives while the services behind it stop.
///
/// Before it binds, it waits up to `startupWait` for the keyring unlock (if any) to settle, so a
/// client that started the daemon on demand finds the vault unlocked; a slower keyring never delays
/// the socket further.
struct SocketServer: Service {
    let server: VarlinkServer
    /// A listening socket systemd passed; nil to bind `socketPath`.
    let inheritedListener: CInt?
    let socketPath: String
    let bound: BoundSocket
    let keyring: KeyringUnlock?
    var startupWait: Duration = .seconds(2)
    /// Logs the "serving" line, once the server accepts.
    let announce: @Sendable () async -> Void
    let logger: Logger

    func run() async throws {
        defer { bound.settle() }  // the socket watch never waits for a server that gave up
        if let keyring {
            // The keyring's answer is a real process's, so this bound is real time.
            await cancelWhenGracefulShutdown { [startupWait] in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { for await _ in keyring.settled { break } }
                    group.addTask { try? await ContinuousClock().sleep(for: startupWait) }
                    await group.next()
                    group.cancelAll()
                }
            }
        }
        guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
        let listener: CInt
        if let inheritedListener {
            listener = inheritedListener
        } else {
            listener = try ListeningSocket.bind(socketPath)
            bound.set(SocketIdentity.of(socketPath))
        }
        do {
            try await server.adopt(listeningDescriptor: listener)
        } catch {
            throw DaemonError("cannot listen on \(socketPath): \(error)")
        }
        await announce()
        try? await gracefulShutdown()
        logger.info("shutting down: no new connections; open ones are closed")
        try await server.shutdown()
    }
}
