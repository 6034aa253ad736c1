import ArgumentParser
import SortedVaultCLI
import VaultCore

/// `sortedvault init …` and `sortedvault daemon …` run `sortedvault-daemon`, which holds the code that
/// needs libcurl and libsecret; arguments (and `--help`) pass through unchanged.
struct InitForwarder: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create a new vault (see `sortedvault init --help`).", helpNames: [])

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() throws {
        do {
            try DaemonExecutable.exec(["init"] + arguments)
        } catch let error as VaultError {
            throw fail(error.reason, .failure)
        }
    }
}

struct DaemonForwarder: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the daemon in the foreground (systemd runs this; other commands start it on demand).",
        helpNames: [])

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() throws {
        do {
            try DaemonExecutable.exec(["daemon"] + arguments)
        } catch let error as VaultError {
            throw fail(error.reason, .failure)
        }
    }
}

struct RecoverForwarder: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover", abstract: "Accept a vault restored from an older copy (see `sortedvault recover --help`).", helpNames: [])

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() throws {
        do {
            try DaemonExecutable.exec(["recover"] + arguments)
        } catch let error as VaultError {
            throw fail(error.reason, .failure)
        }
    }
}
