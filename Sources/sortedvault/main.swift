import VaultAPI
import CLICore

#if canImport(Glibc)
import Glibc
#endif

// `sortedvault`, the lean front: answers retrieve, store, delete, session autologin and status
// itself with one blocking varlink call (no Foundation, no SwiftNIO, no threads; docs/speed.md
// "Lean CLI"), starting the daemon on demand as the full CLI does, and hands every other command —
// and any case it is not sure of — to `sortedvault-cli` with its arguments unchanged.

guard let command = HotCommand.parse(Array(CommandLine.arguments.dropFirst())) else { HandOver.toFullCLI() }
do throws(WireFailure) {
    let paths = try command.location.resolve()
    var connection = try WireConnection.toDaemon(at: paths.socket)
    if connection == nil && !command.noAutostart {
        let outcome = try DaemonAutostart.start(command.location, paths: paths) { () throws(WireFailure) -> Bool in
            connection = try WireConnection.toDaemon(at: paths.socket)
            return connection != nil
        }
        if let failure = outcome.failure { throw failure }
    }
    // No daemon and --no-autostart: the full CLI says so.
    guard let connection else { HandOver.toFullCLI() }
    try HotCall.run(command, over: connection)
} catch {
    StandardStreams.exit(with: error)
}
exit(0)
