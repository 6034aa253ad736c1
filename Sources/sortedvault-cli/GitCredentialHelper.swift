import ArgumentParser
import CredentialHelpers
import CLIOptions
import VaultClient
import VaultCore

/// `git-credential-sortedvault`: git's credential helper over the sortedvault daemon. With
/// `git config --global credential.helper sortedvault`, git runs it as
/// `git-credential-sortedvault get|store|erase` with `key=value` lines on standard input. It is
/// this executable under that name (a link to `sortedvault-cli`; see ``SortedVault/main()``).
struct GitCredentialHelper: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential-sortedvault",
        abstract: "git's credential helper, keeping passwords and OAuth2 logins in sortedvault.",
        discussion: """
            Configure git with `git config --global credential.helper sortedvault`. Passwords are items with \
            service "git:PROTOCOL://HOST" (plus "/PATH" with credential.useHttpPath) and account USERNAME \
            (an empty user name is stored as "%sv:"). \
            A host bound with `sortedvault git bind https://HOST SERVICE ACCOUNT` is answered with an access \
            token of that login, valid now: the daemon refreshes it when needed. Fields with a newline, NUL or \
            other control character, and url= values carrying a password, are refused (exit 1); a secret is \
            never printed in an error. Other actions are ignored, as git asks.
            """,
        version: "0.1.0")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "get, store or erase (given by git).") var action: String

    func run() async throws {
        guard ["get", "store", "erase"].contains(action) else { return }
        do {
            let request = try GitCredentialMessage.parse(
                try SecretInput.readAll(fd: 0, limit: GitCredentialMessage.maximumBytes, what: "git's request"))
            let sessions = try global.sessionClient()
            let helper = GitCredentialStore(store: try global.client(), autoLogin: { try await sessions.autoLogin($0) })
            switch action {
            case "get":
                var notes: [String] = []
                let answer = try await helper.get(request, notes: &notes)
                for note in notes { StandardStreams.reportError(note, program: "git-credential-sortedvault") }
                if let answer { StandardStreams.writeToStandardOutput(answer) }
            case "store": try await helper.store(request)
            default: try await helper.erase(request)
            }
        } catch let error as GitCredentialError {
            throw report(error.description)
        } catch let error as VaultError {
            throw report(error.reason)
        } catch let error as WireFailure {
            throw report(error.message)
        }
    }

    private func report(_ message: String) -> ExitCode {
        StandardStreams.reportError(message, program: "git-credential-sortedvault")
        return ExitCode(1)
    }
}
