import Foundation
import VaultCore
import VaultProtocol
import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

/// Starts the daemon when no socket answers, as gpg-agent does: a detached `sortedvault-daemon daemon`
/// in its own session, then a short wait for its socket.
public enum DaemonLauncher {
    public static func ensureRunning(paths: VaultPaths, options: GlobalOptions) throws {
        if SocketProbe.answers(at: paths.socket) { return }
        guard FileManager.default.fileExists(atPath: paths.database) else {
            throw VaultError(.unavailable, "no vault at \(paths.database): create one with `sortedvault init`")
        }
        StartFailureReport.clear(socket: paths.socket)
        try spawnDaemon(arguments: ["daemon"] + options.daemonArguments)
        // Up to 5 s for the socket, or for the daemon's own reason why it could not start.
        for _ in 0..<500 {
            if SocketProbe.answers(at: paths.socket) { return }
            if let reason = StartFailureReport.read(socket: paths.socket) {
                if SocketProbe.answers(at: paths.socket) { return }
                throw VaultError(.daemonFailed, "the daemon did not start: \(reason)")
            }
            usleep(10_000)
        }
        throw VaultError(.daemonFailed, "the daemon did not start within 5 s; run `sortedvault daemon` in a terminal to see why")
    }

    /// Spawns the daemon executable in a new session, with standard input and output on /dev/null,
    /// so it outlives the command and holds no terminal.
    private static func spawnDaemon(arguments: [String]) throws {
        let executable = try DaemonExecutable.path()
        let status = DetachedProcess.spawn([executable] + arguments)
        guard status == 0 else {
            throw VaultError(.unavailable, "cannot start the daemon: \(String(cString: strerror(status)))")
        }
    }
}
