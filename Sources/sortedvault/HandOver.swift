import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

/// Replaces this process with `sortedvault-cli` (the full ArgumentParser command tree, installed
/// next to this binary) with the same argv, environment and descriptors, so every command the lean
/// front does not answer itself behaves exactly as before. Called only before anything was sent
/// that changes the vault (a store is never sent twice) and before standard input was read.
enum HandOver {
    static let fullCLIName = "sortedvault-cli"

    static func toFullCLI() -> Never {
        guard let path = DaemonAutostart.sibling(fullCLIName) else {
            StandardStreams.exit(with: WireFailure(.daemonUnreachable, "cannot find the running executable, so not \(fullCLIName) either"))
        }
        execv(path, CommandLine.unsafeArgv)
        let reason = String(cString: strerror(errno))
        StandardStreams.exit(with: WireFailure(.daemonUnreachable,
            "cannot run \(path) (\(reason)): install \(fullCLIName) in the same directory as sortedvault"))
    }
}
