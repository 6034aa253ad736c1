import ArgumentParser
import Foundation
import SortedVaultCLI
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault log`: the tail of the daemon's access log — who asked for what, allowed or denied,
/// by which rule. Reads the file directly (no daemon needed); it holds no secrets.
struct Log: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the daemon's access log: who asked for what, allowed or denied, and by which rule.",
        discussion: """
            The log is $XDG_STATE_HOME/sortedvault/access.log (default ~/.local/state), capped at 1 MiB and rotated to \
            access.log.1, access.log.2, … (kept 90 days, at most 64 of them). A program over its line budget is counted, \
            not written line by line: a "summary" line gives its counts. A daemon run by systemd logs to the journal \
            instead: journalctl --user -u sortedvault.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .customShort("n"), help: "How many lines to show.") var lines = 20
    @Flag(help: "Keep showing new lines as they are written (Ctrl-C ends).") var follow = false

    func validate() throws {
        guard lines >= 0 else { throw ValidationError("-n must be 0 or more") }
    }

    func run() async throws {
        try await reportingErrors {
            let path = try global.paths().accessLog
            guard FileManager.default.fileExists(atPath: path) else {
                throw VaultError(.notFound, "no access log at \(path): the daemon has not run yet, or systemd runs it and it logs to the journal (journalctl --user -u sortedvault)")
            }
            let current = try String(contentsOfFile: path, encoding: .utf8)
            var shown = current.split(separator: "\n", omittingEmptySubsequences: true).suffix(lines)
            // The rotated files, newest first, only as far back as the lines asked for reach.
            var index = 1
            while shown.count < lines, let older = try? String(contentsOfFile: path + ".\(index)", encoding: .utf8) {
                let needed = lines - shown.count
                shown = older.split(separator: "\n", omittingEmptySubsequences: true).suffix(needed) + shown
                index += 1
            }
            for line in shown { print(line) }
            if follow {
                fflush(nil)  // every output stream: the -n lines reach a pipe before the wait
                try followAppends(path, from: current.utf8.count)
            }
        }
    }

    /// Prints what is appended to `path`, starting anew when the file is rotated.
    private func followAppends(_ path: String, from start: Int) throws -> Never {
        var offset = start
        var inode = Self.inode(path)
        while true {
            usleep(500_000)
            let now = Self.inode(path)
            if now != inode { (inode, offset) = (now, 0) }
            guard let handle = FileHandle(forReadingAtPath: path) else { continue }
            try handle.seek(toOffset: UInt64(offset))
            let data = try handle.readToEnd() ?? Data()
            try handle.close()
            offset += data.count
            FileHandle.standardOutput.write(data)
        }
    }

    private static func inode(_ path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }
}
