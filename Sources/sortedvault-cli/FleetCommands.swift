import ArgumentParser
import BoundedJSON
import CLIOptions
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultAPI
import VaultClient
import VaultCore
import VaultSession

/// `sortedvault fleet`: the operator's view of the work the daemons sharing a store do in the
/// background (queued revocations, logins in doubt, data keys), and bulk logout.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Revoke every login of a service, and see the background work left (one host or a fleet of daemons).",
        subcommands: [FleetRevoke.self, FleetStatusCommand.self, FleetRewrapCommand.self])
}

struct FleetRevoke: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Log out every login of a service and revoke their tokens at the provider (queued when offline).",
        discussion: """
            Each login is wiped with its revocation queued in the same step, as `session logout` does; \
            revocations the provider cannot take now are retried by the daemons in the background \
            (see `fleet status`). Needs the policy operation fleet.revoke on the service.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "The service whose logins end, e.g. com.sorted.api.") var service: String

    func perform() async throws {
        try ItemKey.checkName(service, what: "service")
        let result = try await global.sessionClient().logoutAll(service: service)
        print("logged out \(result.loggedOut) login\(result.loggedOut == 1 ? "" : "s"); the provider revoked \(result.revoked); "
              + "\(result.revocationsQueued) revocation\(result.revocationsQueued == 1 ? "" : "s") queued and retried in the background")
    }
}

struct FleetStatusCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the revocation backlog, the logins in doubt and the data keys in use.",
        discussion: """
            pending: revocations not delivered yet; stuck: those that failed at least the shown number \
            of times (still retried: check the provider's reachability and client settings); in doubt: \
            logins whose last refresh answer was lost. --json prints the daemon's FleetStatus reply. \
            Needs the policy operation fleet.status.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func perform() async throws {
        let status = try await global.sessionClient().fleetStatus()
        if json {
            print(CLIJSON.text(.object(VarlinkWire.jsonObject(SessionInterface.FleetStatus.Reply(status)))))
            return
        }
        let backlog = status.revocations
        print("revocations pending: \(backlog.pending)")
        print("revocations stuck (\(status.stuckAfter)+ failed attempts): \(backlog.stuck)")
        print("oldest revocation waiting: \(backlog.oldestAge.map { "\(Int($0)) s" } ?? "—")")
        print("logins in doubt: \(status.loginsInDoubt)")
        if let keys = status.dataKeys {
            print("data keys in use: " + (keys.isEmpty ? "—" : keys.map { "\($0.id) (\($0.rows) rows)" }.joined(separator: ", ")))
        }
    }
}

struct FleetRewrapCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "rewrap",
        abstract: "Re-encrypt the fleet's store under a new data key, online, and retire the old keys.",
        discussion: """
            New writes use the new key at once; rows move in batches while every daemon keeps serving; \
            the older keys are retired when no row uses them (`fleet status` shows the keys in use). \
            Only a fleet daemon (backend = "postgresql") has data keys. Needs the policy operation fleet.rewrap.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Rows re-encrypted per transaction (1–10000; the daemon's default is 500).") var batchSize: Int?

    func perform() async throws {
        // A large store takes a while: every row is read, opened, sealed again and written.
        let result = try await global.sessionClient(timeout: .seconds(3600)).rewrapDataKeys(batchSize: batchSize)
        let retired = result.retiredKeyIDs.isEmpty ? "none" : result.retiredKeyIDs.map(String.init).joined(separator: ", ")
        print("re-encrypted \(result.rows) row\(result.rows == 1 ? "" : "s") under data key \(result.keyID); retired data keys: \(retired)")
    }
}
