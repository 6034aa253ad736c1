import ArgumentParser
import CLIOptions
import VaultClient

/// `sortedvault session cancel-logins [--service S]`: ends the user's sign-ins under way that the
/// access policy lets this program sign in to, whichever of the user's programs began them.
///
/// Why it exists: each program of a user may keep 8 sign-ins under way; a program that began
/// sign-ins and never finished them (a confined app gone wrong) blocks only itself, and the user
/// ends them here instead of waiting for them to expire.
struct SessionCancelLogins: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel-logins",
        abstract: "End your sign-ins under way (of --service, or all the policy lets you sign in to); nothing is stored for them.",
        discussion: """
            Sign-ins under way are those begun by `session login` or an app's signIn and not yet \
            completed, cancelled or expired. Prints how many ended.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only sign-ins of this service.") var service: String?

    func perform() async throws {
        let cancelled = try await global.sessionClient().cancelSignIns(service: service)
        print("cancelled \(cancelled) sign-in\(cancelled == 1 ? "" : "s") under way")
    }
}
