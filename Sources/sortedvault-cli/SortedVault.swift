import ArgumentParser
import CLIOptions
import DaemonCommands

/// `sortedvault`: the command-line face of the vault. Every item command talks to the per-user daemon
/// over its socket, starting it on demand.
@main
struct SortedVault: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sortedvault",
        abstract: "A keychain-style credential and token vault for Linux.",
        discussion: """
            Secrets are read from standard input (or a no-echo prompt on a terminal), never from the command line.

            Global options (--socket, --data-dir, --key-file, --policy-dir, --no-autostart) may come before or after the verb.

            Exit codes: 0 success, 1 not found, 2 vault locked, 3 permission denied, 4 daemon unreachable, \
            5 wrong passphrase or key, 6 integrity failure, 7 other failure, 8 sign in again (session), \
            9 offline (session), 64 bad usage.
            """,
        version: "0.1.0",
        subcommands: [
            Init.self, Recover.self, Store.self, Retrieve.self, Delete.self, Exists.self, List.self, Status.self,
            Lock.self, Unlock.self, ChangePassphrase.self, Stop.self, Reload.self, SessionCommand.self, FleetCommand.self, Exec.self, GitCommand.self, Import.self, Export.self, Log.self, DaemonCommand.self,
        ])

    /// The programs this executable is, by the name it was run as: git's and docker's credential
    /// helpers are installed as links to it, so the package carries one copy of the client code.
    static let helpers: [String: any AsyncParsableCommand.Type] = [
        "git-credential-sortedvault": GitCredentialHelper.self,
        "docker-credential-sortedvault": DockerCredentialHelper.self,
    ]

    /// ArgumentParser's own entry point, on the arguments with any global options moved after the verb;
    /// run as a credential helper (`argv[0]`'s last component), that helper's.
    static func main() async {
        if let name = CommandLine.arguments.first?.split(separator: "/").last, let helper = helpers[String(name)] {
            await helper.main()
            return
        }
        do {
            var command = try parseAsRoot(CommandLineOrder.arguments)
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
