import Logging
import ServiceLifecycle
import Varlink

/// The varlink server as a service of the daemon's group: accepts on the listening socket the
/// daemon bound (or systemd passed) until a graceful shutdown, then stops accepting and closes every
/// connection. It is the last service of the group, so a graceful shutdown stops it first: no new
/// call arrives while the loops behind it stop.
///
/// Before it accepts, it waits up to `startupWait` for the keyring unlock (if any) to settle, so a
/// client that started the daemon on demand finds the vault unlocked. Clients that connect meanwhile
/// wait in the socket's backlog; a slower keyring never delays the socket further.
struct SocketServer: Service {
    let server: VarlinkServer
    /// A listening socket; the server owns it from ``run()`` on.
    let listener: CInt
    let socketPath: String
    let keyring: KeyringUnlock?
    var startupWait: Duration = .seconds(2)
    /// Logs the "serving" line, once the server accepts.
    let announce: @Sendable () async -> Void
    let logger: Logger

    func run() async throws {
        if let keyring {
            // The keyring's answer is a real process's, so this bound is real time.
            await cancelWhenGracefulShutdown { [startupWait] in
                await keyring.settled.wait(for: startupWait, on: ContinuousClock())
            }
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
