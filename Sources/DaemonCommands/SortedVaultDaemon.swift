import ArgumentParser
import Synchronization
import VaultDaemon

/// The per-user daemon, `init` and `recover`: `sortedvault-cli` lists ``DaemonCommand``, ``Init`` and
/// ``Recover`` among its commands (the one-host daemon), and `sortedvault-fleet-daemon` runs this root
/// command with its ``FleetOpener``. Users run them as `sortedvault daemon` and `sortedvault init`.
///
/// ```swift
/// // Sources/sortedvault-fleet-daemon/main.swift
/// await SortedVaultDaemon.main(openFleet: FleetStore.opener)
/// ```
public struct SortedVaultDaemon: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sortedvault",
        abstract: "The sortedvault daemon and vault creation.",
        version: "0.1.0",
        subcommands: [DaemonCommand.self, Init.self, Recover.self],
        defaultSubcommand: DaemonCommand.self)

    public init() {}

    /// How this program opens a fleet's store; nil in the one-host daemon.
    static let fleetOpener = Mutex<FleetOpener?>(nil)

    /// Parses the arguments and runs the command; a program that serves fleets passes its ``FleetOpener``.
    public static func main(openFleet: FleetOpener?) async {
        fleetOpener.withLock { $0 = openFleet }
        await main()
    }
}
