#if canImport(Glibc)
import Glibc
#endif

/// The location options every program takes (`--socket`, `--data-dir`, `--key-file`,
/// `--policy-dir`), as given on its command line: nil where the default applies.
public struct CLILocation: Equatable, Sendable {
    public var socket: String?
    public var dataDirectory: String?
    public var keyFile: String?
    public var policyDirectory: String?

    public init(socket: String? = nil, dataDirectory: String? = nil, keyFile: String? = nil, policyDirectory: String? = nil) {
        self.socket = socket
        self.dataDirectory = dataDirectory
        self.keyFile = keyFile
        self.policyDirectory = policyDirectory
    }

    /// The same options, for a daemon started on demand: it must serve the vault this command names.
    public var daemonArguments: [String] {
        var arguments: [String] = []
        if let socket { arguments += ["--socket", socket] }
        if let dataDirectory { arguments += ["--data-dir", dataDirectory] }
        if let keyFile { arguments += ["--key-file", keyFile] }
        if let policyDirectory { arguments += ["--policy-dir", policyDirectory] }
        return arguments
    }

    /// The paths, with these options over the XDG defaults of `environment` (only locations, never
    /// secrets, are read from it).
    public func resolve(environment: (String) -> String? = CLIPaths.processEnvironment) throws(WireFailure) -> CLIPaths {
        let home = environment("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? CLIPaths.passwordDatabaseHome()
        func base(_ name: String, _ fallback: String) -> String {
            environment(name).flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + fallback
        }
        let socket: String
        if let explicit = self.socket {
            socket = explicit
        } else if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            socket = runtime + "/sortedvault/socket"
        } else {
            throw WireFailure(.usage, "XDG_RUNTIME_DIR is not set: log in through a session manager (systemd-logind) or pass --socket PATH")
        }
        let config = base("XDG_CONFIG_HOME", "/.config") + "/sortedvault"
        let defaultPolicy = config + "/policy"
        return CLIPaths(
            socket: socket,
            dataDirectory: dataDirectory ?? base("XDG_DATA_HOME", "/.local/share") + "/sortedvault",
            keyFile: keyFile ?? config + "/vault.key",
            policyDirectory: policyDirectory ?? (access(defaultPolicy, F_OK) == 0 ? defaultPolicy : nil),
            stateDirectory: base("XDG_STATE_HOME", "/.local/state") + "/sortedvault")
    }
}

/// Where sortedvault keeps its files, following the XDG base directory spec: the socket in
/// `$XDG_RUNTIME_DIR/sortedvault/`, the vault in `$XDG_DATA_HOME/sortedvault/` (`~/.local/share`),
/// the key file and policy in `$XDG_CONFIG_HOME/sortedvault/` (`~/.config`; no policy directory
/// means the built-in defaults), the generation record and access log in
/// `$XDG_STATE_HOME/sortedvault/` (`~/.local/state`). Worked out without Foundation, so that the
/// lean front and the full CLI agree to the byte.
///
/// ```swift
/// let paths = try CLILocation(socket: socketOption).resolve()
/// paths.database  // ~/.local/share/sortedvault/vault.db
/// ```
public struct CLIPaths: Equatable, Sendable {
    public var socket: String
    public var dataDirectory: String
    public var keyFile: String
    public var policyDirectory: String?
    public var stateDirectory: String

    public var database: String { dataDirectory + "/vault.db" }
    /// The last vault generation seen (docs/rollback.md), one file per vault path (FNV-1a of the
    /// path names it), kept apart from the vault so that a restored vault does not bring it back.
    public var generationRecord: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in database.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return stateDirectory + "/generation-" + String(hash, radix: 16)
    }
    /// The daemon's decision log (who asked for what, allowed or denied, by which rule), unless
    /// systemd runs the daemon (then the journal).
    public var accessLog: String { stateDirectory + "/access.log" }

    public init(socket: String, dataDirectory: String, keyFile: String, policyDirectory: String?, stateDirectory: String) {
        self.socket = socket
        self.dataDirectory = dataDirectory
        self.keyFile = keyFile
        self.policyDirectory = policyDirectory
        self.stateDirectory = stateDirectory
    }

    /// This process's environment variable `name`.
    public static func processEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The home directory in the password database, for a process started without HOME.
    static func passwordDatabaseHome() -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir else {
            return "/"
        }
        return String(cString: directory)
    }
}
