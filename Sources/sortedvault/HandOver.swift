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
        guard let path = sibling(fullCLIName) else {
            StandardStreams.exit(with: WireFailure(.daemonUnreachable, "cannot find the running executable, so not \(fullCLIName) either"))
        }
        execv(path, CommandLine.unsafeArgv)
        let reason = String(cString: strerror(errno))
        StandardStreams.exit(with: WireFailure(.daemonUnreachable,
            "cannot run \(path) (\(reason)): install \(fullCLIName) in the same directory as sortedvault"))
    }

    /// `name` in the directory of the running executable (`/proc/self/exe`, symlinks resolved).
    static func sibling(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        let running = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = running.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(running[..<$0]) } ?? "."
        return directory + "/" + name
    }
}
