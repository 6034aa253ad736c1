import ArgumentParser
import FoundationEssentials
import CLICore
import CLIOptions
import VaultCore
import VaultClient

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault log`: the tail of the daemon's access log — who asked for what, allowed or denied,
/// by which rule. Reads the file directly (no daemon needed); it holds no secrets.
struct Log: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
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

    func perform() async throws {
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
        let names = await Self.realNames(needed: shown.contains { $0.firstRange(of: "=<private") != nil }, global: global)
        for line in shown { print(Self.naming(String(line), names)) }
        if follow {
            fflush(nil)  // every output stream: the -n lines reach a pipe before the wait
            try await followAppends(path, from: current.utf8.count, names: names)
        }
    }

    /// The names behind the logs' pseudonyms, from the running daemon (never started for this):
    /// empty, with a note on standard error, when it does not answer or the vault is locked.
    static func realNames(needed: Bool, global: GlobalOptions, quiet: Bool = false) async -> [String: String] {
        guard needed else { return [:] }
        do {
            let paths = try global.paths()
            guard SocketProbe.answers(at: paths.socket) else { throw VaultError(.unavailable, "the daemon is not running") }
            return try await VaultClient(socketPath: paths.socket, timeout: .seconds(10)).logNames()
        } catch {
            if quiet { return [:] }
            let why = (error as? VaultError).map { $0.code == .locked ? "the vault is locked" : $0.reason } ?? "\(error)"
            StandardStreams.reportError("services are shown as <private:…> (\(why)); with the daemon running and the vault unlocked this shows their names")
            return [:]
        }
    }

    /// What `path` holds from byte `offset` on; nil when it cannot be opened (rotated away, say).
    static func read(_ path: String, from offset: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var position = off_t(offset)
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, position) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return data }
            data.append(contentsOf: chunk[0..<count])
            position += off_t(count)
        }
    }

    /// `line` with each `service=<private:…>` the daemon named written `service="name"`.
    static func naming(_ line: String, _ names: [String: String]) -> String {
        guard !names.isEmpty, let start = line.firstRange(of: "service=<"), let end = line[start.upperBound...].firstIndex(of: ">") else { return line }
        guard let name = names[String(line[start.upperBound..<end])] else { return line }
        let quoted = "\"" + name.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        return String(line[..<start.lowerBound]) + "service=" + quoted + String(line[line.index(after: end)...])
    }

    /// Prints what is appended to `path`, starting anew when the file is rotated.
    private func followAppends(_ path: String, from start: Int, names known: [String: String]) async throws -> Never {
        var names = known
        var asked = Set(known.keys)
        var offset = start
        var inode = Self.inode(path)
        while true {
            usleep(500_000)
            let now = Self.inode(path)
            if now != inode { (inode, offset) = (now, 0) }
            guard let data = Self.read(path, from: offset) else { continue }
            offset += data.count
            // A service the names did not cover (stored since): ask the daemon again, once per pseudonym.
            let text = String(decoding: data, as: UTF8.self)
            let unknown = Set(text.matches(of: #/service=<(private:[0-9a-f]{16})>/#).map { String($0.output.1) }).subtracting(asked)
            if !unknown.isEmpty {
                asked.formUnion(unknown)
                names.merge(await Self.realNames(needed: true, global: global, quiet: true)) { _, new in new }
            }
            if names.isEmpty {
                data.withUnsafeBytes { StandardStreams.writeAll(1, $0) }
            } else {
                let named = text.split(separator: "\n", omittingEmptySubsequences: false).map { Self.naming(String($0), names) }
                Array(named.joined(separator: "\n").utf8).withUnsafeBytes { StandardStreams.writeAll(1, $0) }
            }
        }
    }

    private static func inode(_ path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }
}
