import ArgumentParser
import Foundation
import VaultClient
import VaultProtocol

/// Where the vault and its daemon are: the options every command takes, `daemon`, `init` and
/// `recover` included.
public struct PathOptions: ParsableArguments {
    public init() {}

    @Option(help: "The daemon's socket (default: $XDG_RUNTIME_DIR/sortedvault/socket).")
    public var socket: String?

    @Option(help: "Where the vault lives (default: $XDG_DATA_HOME/sortedvault).")
    public var dataDir: String?

    @Option(help: "The key file of a key-file vault (default: $XDG_CONFIG_HOME/sortedvault/vault.key).")
    public var keyFile: String?

    @Option(help: "The access-policy and settings directory (default: $XDG_CONFIG_HOME/sortedvault/policy, else built-in defaults).")
    public var policyDir: String?

    /// The paths, with command-line overrides applied.
    public func paths() throws -> VaultPaths {
        let environment = ProcessInfo.processInfo.environment
        var paths: VaultPaths
        if let socket {
            // With an explicit socket, XDG_RUNTIME_DIR is not needed.
            let fallback = ["XDG_RUNTIME_DIR": (socket as NSString).deletingLastPathComponent]
            paths = try VaultPaths.standard(environment: environment.merging(fallback) { current, _ in current })
            paths.socket = socket
        } else {
            paths = try VaultPaths.standard(environment: environment)
        }
        if let dataDir { paths.dataDirectory = dataDir }
        if let keyFile { paths.keyFile = keyFile }
        if let policyDir { paths.policyDirectory = policyDir }
        return paths
    }
}

/// Options every command that talks to the daemon takes: where, and whether to start it.
public struct GlobalOptions: ParsableArguments {
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
        let paths = try paths()
        if !noAutostart { try DaemonLauncher.ensureRunning(paths: paths, options: self) }
        return VaultClient(socketPath: paths.socket)
    }

    /// A login client for the daemon, started on demand unless `--no-autostart`.
    public func sessionClient() throws -> SessionClient {
        let paths = try paths()
        if !noAutostart { try DaemonLauncher.ensureRunning(paths: paths, options: self) }
        return SessionClient(socketPath: paths.socket)
    }

    /// The flags to pass on to a daemon started on demand.
    public var daemonArguments: [String] {
        var arguments: [String] = []
        if let socket { arguments += ["--socket", socket] }
        if let dataDir { arguments += ["--data-dir", dataDir] }
        if let keyFile { arguments += ["--key-file", keyFile] }
        if let policyDir { arguments += ["--policy-dir", policyDir] }
        return arguments
    }
}
