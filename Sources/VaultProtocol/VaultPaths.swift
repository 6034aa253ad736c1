import Foundation

/// Where sortedvault keeps its files, following the XDG base directory spec.
///
/// - socket: `$XDG_RUNTIME_DIR/sortedvault/socket` (the directory mode 0700)
/// - vault: `$XDG_DATA_HOME/sortedvault/vault.db` (default `~/.local/share`)
/// - key file: `$XDG_CONFIG_HOME/sortedvault/vault.key` (default `~/.config`)
/// - generation record (rollback detection): `$XDG_STATE_HOME/sortedvault/generation-<hash of the vault path>`
///   (default `~/.local/state`), kept apart from the vault so a restored vault does not bring it back
/// - policy and settings: `$XDG_CONFIG_HOME/sortedvault/policy/` when it exists, else built-in defaults
/// - access log: `$XDG_STATE_HOME/sortedvault/access.log` (default `~/.local/state`), unless the
///   daemon runs under systemd (then the journal)
public struct VaultPaths: Sendable, Equatable {
    public var socket: String
    public var dataDirectory: String
    public var keyFile: String
    public var policyDirectory: String?
    /// Where the generation record lives (docs/rollback.md).
    public var stateDirectory: String

    public var database: String { dataDirectory + "/vault.db" }
    /// The last vault generation seen, one file per vault path (FNV-1a of the path names it).
    public var generationRecord: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in database.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return stateDirectory + "/generation-" + String(hash, radix: 16)
    }
    public var socketDirectory: String { (socket as NSString).deletingLastPathComponent }
    /// The daemon's decision log (who asked for what, allowed or denied, by which rule).
    public var accessLog: String { stateDirectory + "/access.log" }

    public init(socket: String, dataDirectory: String, keyFile: String, policyDirectory: String?, stateDirectory: String) {
        self.socket = socket
        self.dataDirectory = dataDirectory
        self.keyFile = keyFile
        self.policyDirectory = policyDirectory
        self.stateDirectory = stateDirectory
    }

    /// The default paths for this user, from the environment (never secrets: only locations).
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> VaultPaths {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
            throw PathError("XDG_RUNTIME_DIR is not set: log in through a session manager (systemd-logind) or pass --socket PATH")
        }
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/state"
        let policy = config + "/sortedvault/policy"
        return VaultPaths(
            socket: runtime + "/sortedvault/socket",
            dataDirectory: data + "/sortedvault",
            keyFile: config + "/sortedvault/vault.key",
            policyDirectory: FileManager.default.fileExists(atPath: policy) ? policy : nil,
            stateDirectory: state + "/sortedvault")
    }
}

/// A location could not be worked out.
public struct PathError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
