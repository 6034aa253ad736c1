import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

// `sortedvault`, the lean front: answers retrieve, store, delete, session autologin and status
// itself with one blocking varlink call (no Foundation, no SwiftNIO, no threads; docs/speed.md
// "Lean CLI"), starting the daemon on demand as the full CLI does, and hands every other command —
// and any case it is not sure of — to `sortedvault-cli` with argv unchanged.

guard let command = HotCommand.parse(Array(CommandLine.arguments.dropFirst())),
      let socket = HotCall.socketPath(command) else { HandOver.toFullCLI() }
// A terminal on standard input means a no-echo prompt: the full CLI asks.
if command.verb == .store, isatty(0) == 1 { HandOver.toFullCLI() }
do {
    let connection: WireConnection
    if let opened = try WireConnection.toDaemon(at: socket) {
        connection = opened
    } else if !command.noAutostart, let started = try DaemonStart.startAndConnect(command, socket: socket) {
        connection = started
    } else {
        // No daemon and none started here (--no-autostart, no vault yet, not ours…): the full CLI
        // starts one or says why.
        HandOver.toFullCLI()
    }
    try HotCall.run(command, over: connection)
} catch {
    StandardStreams.exit(with: error)
}
exit(0)
