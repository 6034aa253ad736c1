import ArgumentParser
import FoundationEssentials
import CLIOptions
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault exec --session SERVICE ACCOUNT [--env NAME] -- COMMAND…`: runs a command with a valid
/// access token in a private file whose path is in `$NAME`; the token itself is never in the
/// environment or on a command line.
struct Exec: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command with a login's access token in a private file (its path in an environment variable).",
        discussion: """
            The file (mode 0600 under your own $XDG_RUNTIME_DIR/sortedvault/exec, whatever --socket says) holds the token's bytes and \
            nothing else. When the daemon refreshes the login while the command runs, the file is replaced \
            atomically (readers see the old or the new token, never a mix); it is removed when the command \
            exits or is killed. The exit status is the command's (128 + N when killed by signal N); \
            8 and 9 as for `session autologin` when no valid token can be had.

            Example: sortedvault exec --session com.sorted.api ada -- sh -c 'curl -H "Authorization: Bearer $(cat "$SORTEDVAULT_TOKEN_FILE")" …'
            """)

    @OptionGroup var global: GlobalOptions
    @Option(parsing: .upToNextOption, help: ArgumentHelp("The login: SERVICE ACCOUNT.", valueName: "service account"))
    var session: [String]
    @Option(help: "The environment variable that gets the token file's path.") var env = "SORTEDVAULT_TOKEN_FILE"
    @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.") var command: [String] = []

    func validate() throws {
        guard session.count == 2 else { throw ValidationError("--session takes two values: SERVICE ACCOUNT") }
        guard !command.isEmpty else { throw ValidationError("give the command after --, e.g. sortedvault exec --session SERVICE ACCOUNT -- make deploy") }
        let valid = env.first.map { $0 == "_" || ($0.isASCII && $0.isLetter) } == true
            && env.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
        guard valid else { throw ValidationError("--env takes a variable name like TOKEN_FILE, got \(env.debugDescription)") }
    }

    func run() async throws {
        var status: Int32 = 0
        try await reportingErrors {
            let key = try ItemKey(service: session[0], account: session[1])
            let sessions = try global.sessionClient()
            let file = try TokenFile(environment: ProcessInfo.processInfo.environment)
            defer { file.remove() }
            // Watch first, so a refresh between the first token and the command's start is not missed.
            let refresher = try await TokenRefresher(sessions: sessions, key: key, file: file).start()
            defer { refresher.cancel() }
            try file.write(try await Self.validToken(sessions, key))
            let child = try ChildProcess.spawn(command, extra: [env: file.path])
            status = await ChildProcess.wait(child)
        }
        throw ExitCode(status)
    }

    /// The token now, or the session commands' exit codes (8 sign in again, 9 offline).
    static func validToken(_ sessions: SessionClient, _ key: ItemKey) async throws -> SecureBytes {
        switch try await sessions.autoLogin(key) {
        case .valid(let grant), .refreshed(let grant), .offline(let grant?, _):
            return grant.accessToken
        case .offline(nil, let reason):
            throw fail("offline: \(reason); no valid token is cached, so the command was not started", .offline)
        case .reauthRequired(let reason):
            throw fail("sign in again: \(reason.explanation); the command was not started", .reauthRequired)
        }
    }
}
