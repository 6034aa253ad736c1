import ArgumentParser
import CLIOptions

/// `sortedvault init …`, `recover …` and `daemon …` run `sortedvault-daemon`, which holds the code
/// that needs the HTTP client, TLS and libsecret. Their options are declared here too (the same
/// ``InitArguments``…), so help, man pages and completions show them; once parsed, the command's
/// arguments pass to `sortedvault-daemon` unchanged.
struct InitForwarder: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "init", abstract: "Create a new vault.",
                                                    discussion: InitArguments.discussion)
    @OptionGroup var options: InitArguments
    func run() throws { try DaemonSideCommand.run("init") }
}

struct RecoverForwarder: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover", abstract: "Accept the vault as it is after a rollback was detected (stop the daemon first).",
        discussion: RecoverArguments.discussion)
    @OptionGroup var options: RecoverArguments
    func run() throws { try DaemonSideCommand.run("recover") }
}

struct DaemonForwarder: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the daemon in the foreground (systemd runs this; other commands start it on demand).")
    @OptionGroup var options: DaemonArguments
    func run() throws { try DaemonSideCommand.run("daemon") }
}

enum DaemonSideCommand {
    /// Runs `sortedvault-daemon VERB ARGUMENTS…` in this process, with the arguments this command got.
    static func run(_ verb: String) throws {
        let arguments = CommandLineOrder.arguments
        let index = arguments.firstIndex(of: verb) ?? -1
        let failure = Sibling.exec(DaemonAutostart.daemonName, [verb] + arguments[(index + 1)...])
        throw fail(failure.message, failure.status)
    }
}
