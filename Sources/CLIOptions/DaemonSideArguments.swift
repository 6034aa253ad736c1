import ArgumentParser

/// The options of `init`, `recover` and `daemon`, declared once: DaemonCommands' commands, which
/// `sortedvault-cli` and `sortedvault-fleet-daemon` run.

/// `sortedvault init`.
public struct InitArguments: ParsableArguments {
    public init() {}

    public enum KeySourceKind: String, ExpressibleByArgument, CaseIterable, Sendable {
        case passphrase, keyfile, secretService = "secret-service"
    }
    public enum Cost: String, ExpressibleByArgument, CaseIterable, Sendable { case interactive, moderate, sensitive }

    public static let discussion = """
        passphrase: the daemon starts locked until `sortedvault unlock`. \
        keyfile: a random key is written to the key file (mode 0600) and the daemon unlocks itself at start; \
        for headless service accounts. \
        secret-service: a random key is kept in your desktop keyring (gnome-keyring, KeePassXC, KWallet) and the \
        daemon unlocks itself whenever that keyring is unlocked; you also choose a recovery passphrase, for \
        `sortedvault unlock` when the keyring is unavailable.

        A passphrase is read from --passphrase-fd, else from standard input when it is piped, else asked twice \
        on the terminal.
        """

    @OptionGroup public var location: PathOptions
    /// Accepted and ignored (this command starts no daemon on demand), so that scripts passing it
    /// to every command keep working; hidden from help.
    @Flag(help: .hidden) public var noAutostart = false
    @Option(help: "What protects the vault key.") public var keySource: KeySourceKind = .passphrase
    @Option(help: "Read the passphrase from this file descriptor instead of the terminal.") public var passphraseFd: Int32?
    @Option(help: "Argon2id cost for the passphrase (moderate ≈ 0.6 s).") public var kdfCost: Cost = .moderate
    @Flag(help: .hidden) public var unsafeKdfCostForTesting = false
}

/// `sortedvault recover`.
public struct RecoverArguments: ParsableArguments {
    public init() {}

    public static let discussion = """
        Run this only if you restored an older copy of vault.db on purpose. Items changed or deleted since that \
        copy come back in their older state: sign in again to the logins you had logged out of, and log out again \
        of the ones you had logged out of. The daemon must be stopped. It asks for confirmation on the terminal \
        (--yes without one) and records the recovery in the access log (sortedvault log) and the generation record.
        """

    @OptionGroup public var location: PathOptions
    /// Accepted and ignored (this command starts no daemon on demand), so that scripts passing it
    /// to every command keep working; hidden from help.
    @Flag(help: .hidden) public var noAutostart = false
    @Flag(help: "Confirm: the vault as it is now becomes the current state.") public var acceptRollback = false
    @Flag(help: "Do not ask on the terminal (for scripts); the recovery is still recorded.") public var yes = false
    @Option(help: "Read the passphrase from this file descriptor instead of the terminal.") public var passphraseFd: Int32?
}

/// `sortedvault daemon`.
public struct DaemonArguments: ParsableArguments {
    public init() {}

    public enum LogLevel: String, ExpressibleByArgument, CaseIterable, Sendable {
        case trace, debug, info, notice, warning, error, critical
    }

    @OptionGroup public var location: PathOptions
    /// Accepted and ignored (this command starts no daemon on demand), so that scripts passing it
    /// to every command keep working; hidden from help.
    @Flag(help: .hidden) public var noAutostart = false
    @Option(help: "How much the daemon logs (to standard error, or the journal).") public var logLevel: LogLevel = .info
    @Option(help: .hidden) public var unsafeClockFile: String?
    @Option(help: "How often the daemon checks that its socket still leads to it; it stops when not (seconds).")
    public var socketCheckSeconds: Int = 60
    @Option(help: "The access log's size cap per file; past it the file is rotated to access.log.1, .2, … (bytes).")
    public var accessLogMaxBytes: Int = 1 << 20
}
