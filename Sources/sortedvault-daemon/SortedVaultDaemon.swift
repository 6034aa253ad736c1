import ArgumentParser

/// `sortedvault-daemon`: the per-user daemon, `init` and `recover`. Users run them as `sortedvault daemon` and
/// `sortedvault init`, which hand over to this executable; the other commands never load its libraries.
@main
struct SortedVaultDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sortedvault",
        abstract: "The sortedvault daemon and vault creation.",
        version: "0.1.0",
        subcommands: [DaemonCommand.self, Init.self, Recover.self],
        defaultSubcommand: DaemonCommand.self)
}
