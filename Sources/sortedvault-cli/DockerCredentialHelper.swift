import ArgumentParser
import CredentialHelpers
import CLIOptions
import VaultCore

/// `docker-credential-sortedvault`: docker's credential helper over the sortedvault daemon. Set
/// `"credsStore": "sortedvault"` in ~/.docker/config.json and docker runs it as
/// `docker-credential-sortedvault store|get|erase|list`, with its input on standard input. It is
/// this executable under that name (a link to `sortedvault-cli`; see ``SortedVault/main()``).
struct DockerCredentialHelper: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker-credential-sortedvault",
        abstract: "docker's credential helper, keeping registry logins in sortedvault.",
        discussion: """
            Configure docker with "credsStore": "sortedvault" in ~/.docker/config.json. Each login is the \
            item service "docker:SERVERURL", account USERNAME. On failure the message is printed on standard \
            output and the exit status is 1, as docker expects; a missing login answers \
            "credentials not found in native keychain". No D-Bus session is needed.
            """,
        version: "0.1.0",
        subcommands: [DockerStore.self, DockerGet.self, DockerErase.self, DockerList.self, DockerVersion.self])

    /// No action: the reference helpers' usage line on standard output, exit 1.
    func run() async throws {
        StandardStreams.writeToStandardOutput(Array("Usage: docker-credential-sortedvault <store|get|erase|list|version>\n".utf8))
        throw ExitCode(1)
    }
}

/// One protocol action (`store`, `get`, `erase`, `list`) over the daemon: failures are printed on
/// standard output with exit 1 (docker's convention).
protocol DockerAction: AsyncParsableCommand {
    var global: GlobalOptions { get }
    func act(_ helper: DockerCredentialStore) async throws
}

extension DockerAction {
    func run() async throws {
        do {
            try await act(DockerCredentialStore(store: try global.client()))
        } catch {
            let message: String
            switch error {
            case let error as DockerCredentialError: message = error.description
            case let error as VaultError: message = error.reason
            case let error as WireFailure: message = error.message
            default: throw error
            }
            StandardStreams.writeToStandardOutput(Array((message + "\n").utf8))
            throw ExitCode(1)
        }
    }
}

struct DockerStore: DockerAction {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Store a login: {\"ServerURL\",\"Username\",\"Secret\"} JSON on standard input.")
    @OptionGroup var global: GlobalOptions

    func act(_ helper: DockerCredentialStore) async throws {
        try await helper.store(try SecretInput.readAll(fd: 0, limit: DockerCredentialStore.maximumInputBytes, what: "the credentials"))
    }
}

struct DockerGet: DockerAction {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the login for the server URL on standard input as JSON.")
    @OptionGroup var global: GlobalOptions

    func act(_ helper: DockerCredentialStore) async throws {
        StandardStreams.writeToStandardOutput(try await helper.get(try SecretInput.readAll(fd: 0, limit: 65536, what: "the server URL")))
    }
}

struct DockerErase: DockerAction {
    static let configuration = CommandConfiguration(
        commandName: "erase", abstract: "Delete the login for the server URL on standard input.")
    @OptionGroup var global: GlobalOptions

    func act(_ helper: DockerCredentialStore) async throws {
        try await helper.erase(try SecretInput.readAll(fd: 0, limit: 65536, what: "the server URL"))
    }
}

struct DockerList: DockerAction {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Print {\"SERVERURL\":\"USERNAME\",…} for every stored docker login.")
    @OptionGroup var global: GlobalOptions

    func act(_ helper: DockerCredentialStore) async throws {
        StandardStreams.writeToStandardOutput(try await helper.list())
    }
}

struct DockerVersion: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Print the helper's version.")

    func run() {
        StandardStreams.writeToStandardOutput(Array("docker-credential-sortedvault (sortedvault) 0.1.0\n".utf8))
    }
}
