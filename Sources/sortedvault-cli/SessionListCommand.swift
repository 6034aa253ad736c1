import ArgumentParser
import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import CLIOptions
import VaultAPI
import VaultClient
import VaultSession

/// `sortedvault session list`: the logins this caller may see, for an app that does not know its
/// account name yet. Prints names, user ids, states and expiries — never a token.
struct SessionListCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the stored logins the access policy lets you see (never their tokens).",
        discussion: """
            One line per login: SERVICE, ACCOUNT, state (valid, refreshDue, expired, reauthRequired), \
            user id, when the access token expires and the provider kind (oauth2, oidc, firebase, \
            supabase). --json prints the daemon's List reply, times as ISO 8601.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only logins of this service.") var service: String?
    @Flag(help: "Print JSON.") var json = false

    func perform() async throws {
        let logins = try await global.sessionClient().list(service: service)
        if json {
            print(CLIJSON.text(.object(VarlinkWire.jsonObject(SessionInterface.List.Reply(logins: logins.map(SessionInterface.Login.init))))))
            return
        }
        if logins.isEmpty {
            print(service.map { "no login of \($0) is stored, or the access policy hides it" }
                  ?? "no login is stored, or the access policy hides them")
            return
        }
        for login in logins {
            print([login.service, login.account, login.state, "user: \(login.userID ?? "—")",
                   "access token expires: \(login.accessTokenExpiresAt)", "provider: \(login.providerKind)"].joined(separator: "  "))
        }
    }
}
