import ArgumentParser
import VaultClient

/// Where the vault and its daemon are: the options every command takes, `daemon`, `init` and
/// `recover` included.
public struct PathOptions: ParsableArguments, Sendable {
    public init() {}

    @Option(help: "The daemon's socket (default: $XDG_RUNTIME_DIR/sortedvault/socket).")
    public var socket: String?

    @Option(help: "Where the vault lives (default: $XDG_DATA_HOME/sortedvault).")
    public var dataDir: String?

    @Option(help: "The key file of a key-file vault (default: $XDG_CONFIG_HOME/sortedvault/vault.key).")
    public var keyFile: String?

    @Option(help: "The access-policy and settings directory (default: $XDG_CONFIG_HOME/sortedvault/policy, else built-in defaults).")
    public var policyDir: String?

    /// The options as the CLI core takes them.
    public var cliLocation: CLILocation {
        CLILocation(socket: socket, dataDirectory: dataDir, keyFile: keyFile, policyDirectory: policyDir)
    }

    /// The paths, with command-line overrides applied (``CLILocation/resolve(environment:)``).
    public func paths() throws -> VaultPaths {
        try cliLocation.resolve()
    }
}

/// Options every command that talks to the daemon takes: where, and whether to start it.
public struct GlobalOptions: ParsableArguments, Sendable {
    public init() {}

    @OptionGroup public var location: PathOptions

    @Flag(help: "Do not start the daemon when no socket answers.")
    public var noAutostart = false

    public var socket: String? { location.socket }
    public var dataDir: String? { location.dataDir }
    public var keyFile: String? { location.keyFile }
    public var policyDir: String? { location.policyDir }

    /// The paths, with command-line overrides applied.
    public func paths() throws -> VaultPaths { try location.paths() }

    /// A client for the daemon, started on demand unless `--no-autostart`.
    public func client() throws -> VaultClient {
        VaultClient(socketPath: try socketWithDaemon())
    }

    /// A login client for the daemon, started on demand unless `--no-autostart`.
    /// `timeout` bounds each call's wait for its reply (a device sign-in's completion waits long).
    public func sessionClient(timeout: Duration = SessionClient.defaultTimeout) throws -> SessionClient {
        SessionClient(socketPath: try socketWithDaemon(), timeout: timeout)
    }

    /// The socket, where a daemon answers now unless `--no-autostart` (``DaemonAutostart``).
    private func socketWithDaemon() throws(WireFailure) -> String {
        let paths = try location.cliLocation.resolve()
        guard !noAutostart, !SocketProbe.answers(at: paths.socket) else { return paths.socket }
        let outcome = DaemonAutostart.start(location.cliLocation, paths: paths) { SocketProbe.answers(at: paths.socket) }
        if let failure = outcome.failure { throw failure }
        return paths.socket
    }
}
