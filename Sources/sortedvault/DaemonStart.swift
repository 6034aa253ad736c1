import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

/// Starts the daemon when no socket answers (``DaemonAutostart``, as the full CLI does), so that the
/// first command of a session is still answered by this process. Anything out of the ordinary — no
/// vault yet, no `sortedvault-daemon` beside this binary, `HOME` unset, a failed spawn — returns nil:
/// the caller hands over, and the full CLI says what is wrong.
enum DaemonStart {
    static func startAndConnect(_ command: HotCommand, socket: String) throws(WireFailure) -> WireConnection? {
        guard let database = databasePath(command), access(database, F_OK) == 0,
              let daemon = DaemonAutostart.sibling("sortedvault-daemon"), access(daemon, X_OK) == 0 else { return nil }
        var arguments = [daemon, "daemon"]
        if let socket = command.socket { arguments += ["--socket", socket] }
        if let dataDir = command.dataDir { arguments += ["--data-dir", dataDir] }
        if let keyFile = command.keyFile { arguments += ["--key-file", keyFile] }
        if let policyDir = command.policyDir { arguments += ["--policy-dir", policyDir] }
        var connection: WireConnection?
        let outcome = try DaemonAutostart.start(arguments, socket: socket) { () throws(WireFailure) -> Bool in
            connection = try WireConnection.toDaemon(at: socket)
            return connection != nil
        }
        switch outcome {
        case .answering: return connection
        case .spawnFailed: return nil
        case .reported, .timedOut: throw WireFailure(.failure, outcome.failureText ?? "")
        }
    }

    /// `VaultPaths.database`: `--data-dir`, else `$XDG_DATA_HOME` (absolute), else `$HOME/.local/share`,
    /// then `/sortedvault/vault.db`. Nil without a usable HOME (the full CLI asks the password database).
    private static func databasePath(_ command: HotCommand) -> String? {
        if let dataDir = command.dataDir { return dataDir + "/vault.db" }
        if let raw = getenv("XDG_DATA_HOME"), raw.pointee == UInt8(ascii: "/") {
            return String(cString: raw) + "/sortedvault/vault.db"
        }
        guard let raw = getenv("HOME"), raw.pointee != 0 else { return nil }
        return String(cString: raw) + "/.local/share/sortedvault/vault.db"
    }
}
