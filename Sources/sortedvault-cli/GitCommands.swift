import ArgumentParser
import CredentialHelpers
import CLIOptions
import VaultCore

/// `sortedvault git bind|unbind`: ties a git host to a persistent login, so
/// git-credential-sortedvault answers with an access token that is valid now.
struct GitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git",
        abstract: "Bind git hosts to persistent logins for git-credential-sortedvault.",
        subcommands: [GitBind.self, GitUnbind.self])
}

struct GitBind: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "bind",
        abstract: "Answer git's requests for a host with the access token of a saved login.",
        discussion: """
            Save the login first (`sortedvault session save SERVICE ACCOUNT …`), then \
            `sortedvault git bind https://git.example.com SERVICE ACCOUNT`. git then gets USERNAME \
            (default oauth2) and a token that the daemon refreshes whenever it is due.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The host, e.g. https://git.example.com (no path, no user name).") var url: String
    @Argument(help: "The login's service.") var service: String
    @Argument(help: "The login's account.") var account: String
    @Option(help: "The user name git sends with the token.") var username: String = "oauth2"

    func perform() async throws {
        do {
            let origin = try GitLoginBinding.origin(fromURL: url)
            let login = try ItemKey(service: service, account: account)
            // A binding to no login would only fail at the first git fetch.
            do {
                _ = try await global.sessionClient().status(login)
            } catch let error as VaultError where error.code == .notFound {
                throw VaultError(.notFound, "there is no login \(service) \(account) to bind: save or sign in to it first (`sortedvault session list` shows the logins)")
            }
            let binding = GitLoginBinding(origin: origin, username: username, login: login)
            try await binding.save(in: try global.client())
            print("git requests for \(origin) now get the access token of \(service)/\(account) (user name \(username))")
        } catch let error as GitCredentialError {
            throw VaultError.invalidArgument(error.description)
        }
    }
}

struct GitUnbind: ReportingCommand {
    static let configuration = CommandConfiguration(commandName: "unbind", abstract: "Remove a host's binding.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The host, e.g. https://git.example.com.") var url: String

    func perform() async throws {
        do {
            let origin = try GitLoginBinding.origin(fromURL: url)
            let removed = try await GitLoginBinding.remove(origin: origin, from: try global.client())
            print(removed ? "removed the binding of \(origin)" : "\(origin) was not bound; nothing to do")
        } catch let error as GitCredentialError {
            throw VaultError.invalidArgument(error.description)
        }
    }
}
