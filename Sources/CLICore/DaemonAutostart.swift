#if canImport(Glibc)
import Glibc
#endif

/// Starting the daemon on demand, as gpg-agent does, for every program that talks to it: once a
/// vault exists to serve, a detached `sortedvault-cli daemon` from beside the running executable
/// (``DetachedProcess``), then up to 5 s for its socket to answer or for the daemon's own reason
/// why it could not start (``StartFailureReport``). The caller asks first whether something
/// answers already, and how it asks (`answers`) is its own.
public enum DaemonAutostart {
    /// The program that runs the daemon (`sortedvault-cli daemon`): the CLI and the daemon are one
    /// program, as they share nearly all their code (docs/install.md).
    public static let daemonProgram = "sortedvault-cli"

    public enum Outcome: Equatable, Sendable {
        case answering
        /// No vault at this database path: there is nothing to serve yet.
        case noVault(String)
        /// No `sortedvault-cli` beside the running executable.
        case noDaemonExecutable(Sibling.Missing)
        /// posix_spawn failed with this errno value.
        case spawnFailed(Int32)
        /// The daemon wrote why it could not start.
        case reported(String)
        case timedOut

        /// What every program prints, and the status it exits with, for a daemon that did not
        /// come up; nil for `.answering`.
        public var failure: WireFailure? {
            switch self {
            case .answering:
                return nil
            case .noVault(let database):
                return WireFailure(.daemonUnreachable, "no vault at \(database): create one with `sortedvault init`")
            case .noDaemonExecutable(let missing):
                return missing.failure
            case .spawnFailed(let errorNumber):
                return WireFailure(.daemonUnreachable, "cannot start the daemon: \(String(cString: strerror(errorNumber)))")
            case .reported(let reason):
                return WireFailure(.failure, "the daemon did not start: \(reason)")
            case .timedOut:
                return WireFailure(.failure, "the daemon did not start within 5 s; run `sortedvault daemon` in a terminal to see why")
            }
        }
    }

    /// Starts the daemon for the vault at `paths` (with the command's `location` options) and
    /// waits for `answers()` to be true.
    public static func start<Failure: Error>(
        _ location: CLILocation, paths: CLIPaths, answers: () throws(Failure) -> Bool
    ) throws(Failure) -> Outcome {
        guard access(paths.database, F_OK) == 0 else { return .noVault(paths.database) }
        let daemon: String
        switch Sibling.executable(daemonProgram) {
        case .success(let path): daemon = path
        case .failure(let missing): return .noDaemonExecutable(missing)
        }
        StartFailureReport.clear(socket: paths.socket)
        let status = DetachedProcess.spawn([daemon, "daemon"] + location.daemonArguments)
        guard status == 0 else { return .spawnFailed(status) }
        for _ in 0..<500 {
            if try answers() { return .answering }
            if let reason = StartFailureReport.read(socket: paths.socket) {
                // The report may race a daemon that started after all (another one took the socket).
                return try answers() ? .answering : .reported(reason)
            }
            usleep(10_000)
        }
        return .timedOut
    }
}

/// The programs `sortedvault`, `sortedvault-cli` and (for a fleet) `sortedvault-fleet-daemon`,
/// installed side by side: each finds the others in the directory of the running executable.
public enum Sibling {
    public struct Missing: Error, Equatable, Sendable {
        public let name: String
        /// Where it should be; nil when the running executable itself could not be found.
        public let path: String?

        public var failure: WireFailure {
            guard let path else {
                return WireFailure(.daemonUnreachable, "cannot find the running executable, so not \(name) either")
            }
            return WireFailure(.daemonUnreachable, "no executable \(path): \(Sibling.installHint(name))")
        }
    }

    static func installHint(_ name: String) -> String { "install \(name) in the same directory as sortedvault" }

    /// `name` in the directory of the running executable (`/proc/self/exe`, symlinks resolved).
    public static func path(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        let running = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = running.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(running[..<$0]) } ?? "."
        return directory + "/" + name
    }

    /// `name`'s path, if it is there and executable.
    public static func executable(_ name: String) -> Result<String, Missing> {
        guard let path = path(name) else { return .failure(Missing(name: name, path: nil)) }
        guard access(path, X_OK) == 0 else { return .failure(Missing(name: name, path: path)) }
        return .success(path)
    }

    /// Replaces this process with `name ARGUMENTS` (same environment and descriptors); returns only
    /// when that failed, with what to print.
    public static func exec(_ name: String, _ arguments: [String]) -> WireFailure {
        let path: String
        switch executable(name) {
        case .success(let found): path = found
        case .failure(let missing): return missing.failure
        }
        let argv = ([name] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        return WireFailure(.daemonUnreachable, "cannot run \(path) (\(reason)): \(installHint(name))")
    }
}
