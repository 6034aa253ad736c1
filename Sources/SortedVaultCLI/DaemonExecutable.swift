import Foundation
import VaultCore
import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault-daemon`, installed next to `sortedvault` and `sortedvault-cli`: the daemon and `init`, which need the HTTP
/// client (libcurl) and the desktop keyring (libsecret, GLib). Keeping them out of the `sortedvault`
/// binary keeps every other command's start-up to the few libraries it needs.
public enum DaemonExecutable {
    public static let name = "sortedvault-daemon"

    /// The daemon executable beside the running one.
    public static func path() throws -> String {
        guard let path = DaemonAutostart.sibling(name) else {
            throw VaultError(.unavailable, "cannot find the running executable, so not \(name) either")
        }
        guard access(path, X_OK) == 0 else {
            throw VaultError(.unavailable, "no executable \(path): install sortedvault, sortedvault-cli and sortedvault-daemon in the same directory")
        }
        return path
    }

    /// Replaces this process with `sortedvault-daemon ARGUMENTS` (same environment and descriptors).
    public static func exec(_ arguments: [String]) throws -> Never {
        let path = try path()
        let argv = ([name] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        throw VaultError(.unavailable, "cannot run \(path): \(reason)")
    }
}
