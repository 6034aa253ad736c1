import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

// `sortedvault`, the lean front: answers retrieve, store, delete and session autologin itself with
// one blocking varlink call (no Foundation, no SwiftNIO, no threads; docs/speed.md "Lean CLI"), and
// hands every other command — and any case it is not sure of, or a daemon it would have to start —
// to `sortedvault-cli` with argv unchanged.

guard let command = HotCommand.parse(Array(CommandLine.arguments.dropFirst())),
      let socket = HotCall.socketPath(command) else { HandOver.toFullCLI() }
// A terminal on standard input means a no-echo prompt: the full CLI asks.
if command.verb == .store, isatty(0) == 1 { HandOver.toFullCLI() }
// No daemon answers (or the socket is not ours): the full CLI starts one or says why.
let connection: WireConnection
do {
    connection = try WireConnection(path: socket)
} catch {
    HandOver.toFullCLI()
}
do {
    try HotCall.run(command, over: connection)
} catch {
    StandardStreams.exit(with: error)
}
exit(0)
