import DaemonCommands

// The one-host daemon: a local vault only. Settings with `backend = "postgresql"` make it run
// sortedvault-fleet-daemon, beside it, with the same arguments.
await SortedVaultDaemon.main(openFleet: nil)
