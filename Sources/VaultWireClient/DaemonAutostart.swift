#if canImport(Glibc)
import Glibc
#endif

/// Starting the daemon on demand, as gpg-agent does, for both CLIs: a detached `sortedvault-daemon`
/// (``DetachedProcess``), then up to 5 s for its socket to answer or for the daemon's own reason why
/// it could not start (``StartFailureReport``). Each CLI decides whether to start it (a vault must
/// exist) and turns the outcome into its own error type; the start and the wait are this one body.
public enum DaemonAutostart {
    public enum Outcome: Equatable, Sendable {
        case answering
        /// posix_spawn failed with this errno value.
        case spawnFailed(Int32)
        /// The daemon wrote why it could not start.
        case reported(String)
        case timedOut

        /// The text both CLIs print for a daemon that did not come up; nil for `.answering`.
        public var failureText: String? {
            switch self {
            case .answering: return nil
            case .spawnFailed(let errorNumber): return "cannot start the daemon: \(String(cString: strerror(errorNumber)))"
            case .reported(let reason): return "the daemon did not start: \(reason)"
            case .timedOut: return "the daemon did not start within 5 s; run `sortedvault daemon` in a terminal to see why"
            }
        }
    }

    /// Spawns `arguments` (the daemon executable first) detached and waits for `answers()` to be true.
    public static func start<Failure: Error>(
        _ arguments: [String], socket: String, answers: () throws(Failure) -> Bool
    ) throws(Failure) -> Outcome {
        StartFailureReport.clear(socket: socket)
        let status = DetachedProcess.spawn(arguments)
        guard status == 0 else { return .spawnFailed(status) }
        for _ in 0..<500 {
            if try answers() { return .answering }
            if let reason = StartFailureReport.read(socket: socket) {
                // The report may race a daemon that started after all (another one took the socket).
                return try answers() ? .answering : .reported(reason)
            }
            usleep(10_000)
        }
        return .timedOut
    }

    /// `name` in the directory of the running executable (`/proc/self/exe`, symlinks resolved): the
    /// binaries `sortedvault`, `sortedvault-cli` and `sortedvault-daemon` are installed side by side.
    public static func sibling(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        let running = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = running.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(running[..<$0]) } ?? "."
        return directory + "/" + name
    }
}
