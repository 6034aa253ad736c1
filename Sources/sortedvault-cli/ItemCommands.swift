import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import CLIOptions
import VaultClient
import VaultCore
import VaultCrypto
import CLICore

struct Store: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Store a secret (read from standard input, or a no-echo prompt).",
        discussion: """
            The secret is the exact bytes on standard input. It is never taken from the command line. \
            Storing over an item keeps its label, attributes and expiry unless this command gives them; \
            to drop them, delete the item first.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The service, e.g. com.sorted.api.") var service: String
    @Argument(help: "The account within the service.") var account: String
    @Argument(help: .hidden) var refusedSecret: String?
    @Option(help: "A human-readable label.") var label: String?
    @Option(name: .customLong("attribute"), help: "An attribute NAME=VALUE; repeat for more.") var attributes: [String] = []
    @Option(help: "Forget the item after this many seconds.") var expiresIn: Double?

    func validate() throws {
        if refusedSecret != nil {
            throw ValidationError("refusing a secret on the command line: other users can read it in /proc and your shell history. Pipe it on standard input instead: `printf %s \"$TOKEN\" | sortedvault store SERVICE ACCOUNT`")
        }
        for attribute in attributes where !attribute.contains("=" as Character) {
            throw ValidationError("--attribute takes NAME=VALUE, got \(attribute.debugDescription)")
        }
    }

    func perform() async throws {
        var pairs: [String: String] = [:]
        for attribute in attributes {
            let parts = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            pairs[String(parts[0])] = String(parts[1])
        }
        let options = try StoreOptions(label: label, attributes: pairs, expiresAt: expiresIn.map { Date().addingTimeInterval($0) })
        let key = try ItemKey(service: service, account: account)
        let secret = try SecretInput.secretToStore(prompt: "Secret for \(service)/\(account): ")
        try await global.client().store(secret, for: key, options: options, keepingStored: true)
    }
}

/// SERVICE ACCOUNT, shared by the commands on one item.
struct ItemKeyArguments: ParsableArguments {
    @Argument(help: "The service, e.g. com.sorted.api.") var service: String
    @Argument(help: "The account within the service.") var account: String

    func key() throws -> ItemKey { try ItemKey(service: service, account: account) }
}

struct Retrieve: ReportingCommand {
    static let configuration = CommandConfiguration(commandName: "retrieve", abstract: "Write a secret's exact bytes to standard output.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemKeyArguments

    func perform() async throws {
        let stored = try await global.client().retrieve(item.key())
        StandardStreams.writeToStandardOutput(stored.secret)
    }
}

struct Delete: ReportingCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an item and scrub it from the data files.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemKeyArguments

    func perform() async throws {
        try await global.client().delete(item.key())
    }
}

struct Exists: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "exists",
        abstract: "Tell by the exit status whether an item exists, without reading its secret.",
        discussion: "Prints nothing: exit 0 when the item exists, 1 when it does not (or it expired). The access policy checks it as \"list\" on the service.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemKeyArguments

    func perform() async throws {
        // The answer is the exit status, as `test` gives it: "no" is not an error to print.
        guard try await global.client().exists(item.key()) else {
            throw ExitCode(ExitStatus.notFound.rawValue)
        }
    }
}

struct List: ReportingCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List items (metadata only, never secrets).")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this service's items.") var service: String?
    @Flag(help: "JSON output.") var json = false

    func perform() async throws {
        let items = try await global.client().list(service: service)
        if json {
            let rows = items.map { item -> [String: String] in
                var row = ["service": item.service, "account": item.account]
                if let label = item.label { row["label"] = label }
                if let expires = item.expiresAt { row["expires"] = CLIJSON.time(expires) }
                row["modified"] = CLIJSON.time(item.modifiedAt)
                return row
            }
            print(try CLIJSON.text(rows))
        } else {
            for item in items {
                print([item.service, item.account, item.label ?? ""].joined(separator: "\t"))
            }
        }
    }
}
