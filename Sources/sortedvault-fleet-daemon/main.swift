import DaemonCommands
import VaultFleet

// The fleet daemon: the one-host daemon's commands, and a fleet's store in PostgreSQL (docs/fleet.md).
await SortedVaultDaemon.main(openFleet: FleetStore.opener)
