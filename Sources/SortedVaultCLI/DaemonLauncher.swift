import Foundation
import VaultCore
import VaultProtocol
import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

/// Starts the daemon when no socket answers (``DaemonAutostart``), once a vault exists to serve.
public enum DaemonLauncher {
    public static func ensureRunning(paths: VaultPaths, options: GlobalOptions) throws {
        if SocketProbe.answers(at: paths.socket) { return }
        guard FileManager.default.fileExists(atPath: paths.database) else {
            throw VaultError(.unavailable, "no vault at \(paths.database): create one with `sortedvault init`")
        }
        let arguments = [try DaemonExecutable.path(), "daemon"] + options.daemonArguments
        let outcome = DaemonAutostart.start(arguments, socket: paths.socket) { SocketProbe.answers(at: paths.socket) }
        switch outcome {
        case .answering: return
        case .spawnFailed: throw VaultError(.unavailable, outcome.failureText ?? "")
        case .reported, .timedOut: throw VaultError(.daemonFailed, outcome.failureText ?? "")
        }
    }
}
