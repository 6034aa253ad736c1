import Foundation
import VaultClient

#if canImport(Glibc)
import Glibc
#endif

/// A private world for the real `sortedvault` binary: its own HOME and XDG directories in a temp
/// dir, a daemon process it starts and stops, and helpers to run CLI commands against it. Shared by
/// every test target that runs the binary.
public final class CLIHarness: @unchecked Sendable {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: Data
        public let stderr: String
        public var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    public let root: String
    /// Added to every command's and the daemon's environment (e.g. a private D-Bus address).
    public let extraEnvironment: [String: String]
    /// When false, every command gets `--no-autostart`: the test starts and stops the daemon itself.
    public let autostart: Bool
    public var runtimeDir: String { root + "/run" }
    public var socket: String { runtimeDir + "/sortedvault/socket" }
    public var dataDir: String { root + "/data/sortedvault" }
    public var database: String { dataDir + "/vault.db" }
    public var configDir: String { root + "/config/sortedvault" }
    public private(set) var daemon: Subprocess?
    public var daemonLogPath: String { root + "/daemon.log" }
    /// The daemon's access log (``environment`` sets XDG_STATE_HOME inside ``root``).
    public var accessLogPath: String { root + "/home/.local/state/sortedvault/access.log" }

    /// The built `sortedvault` executable: next to this test bundle in the build directory.
    public static let executable: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, 4095)
        let bundle = String(decoding: buffer[0..<max(length, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ((bundle as NSString).deletingLastPathComponent as NSString).appendingPathComponent("sortedvault")
    }()

    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    public init(extraEnvironment: [String: String] = [:], autostart: Bool = true) throws {
        TestDescriptorLimit.raised
        self.extraEnvironment = extraEnvironment
        self.autostart = autostart
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sv-cli-\(UUID().uuidString.prefix(8))").path
        for directory in [root, runtimeDir, root + "/data", root + "/config", root + "/home"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw HarnessError("the sortedvault binary is not built at \(Self.executable): run `swift build` first")
        }
    }

    /// A client of this world's daemon.
    public var client: VaultClient { VaultClient(socketPath: socket, timeout: .seconds(60)) }

    /// Polls `Status` until the vault reports `locked == false`, for at most `timeout`.
    public func waitUntilUnlocked(timeout: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await !client.status().locked { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    deinit {
        if let daemon {
            daemon.signal(SIGKILL)
            daemon.wait()
        }
        killStrayDaemons()
        try? FileManager.default.removeItem(atPath: root)
    }

    public var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment.merging(extraEnvironment) { _, extra in extra }
        environment["HOME"] = root + "/home"
        environment["XDG_RUNTIME_DIR"] = runtimeDir
        environment["XDG_DATA_HOME"] = root + "/data"
        environment["XDG_CONFIG_HOME"] = root + "/config"
        // Set, not inherited: a developer's own XDG_STATE_HOME must never receive a test's access log.
        environment["XDG_STATE_HOME"] = root + "/home/.local/state"
        return environment
    }

    /// Runs `sortedvault ARGS` with `input` on standard input and waits for it. `executable` runs
    /// another copy of the binary (see ``ReachableExecutable``).
    @discardableResult
    public func run(_ arguments: [String], input: Data = Data(), prefix: [String] = [], executable: String = CLIHarness.executable) throws -> Result {
        let argv = prefix + [executable] + arguments + (autostart ? [] : ["--no-autostart"])
        let (status, out, err) = try Subprocess.run(argv, environment: environment, input: input)
        return Result(status: status, stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }

    /// `sortedvault init --key-source keyfile`.
    public func initKeyFileVault() throws {
        let result = try run(["init", "--key-source", "keyfile"])
        guard result.status == 0 else { throw HarnessError("init failed: \(result.stderr)") }
    }

    /// `sortedvault init` with a passphrase at the test cost.
    public func initPassphraseVault(_ passphrase: String) throws {
        let result = try run(["init", "--key-source", "passphrase", "--passphrase-fd", "0", "--unsafe-kdf-cost-for-testing"],
                             input: Data((passphrase + "\n").utf8))
        guard result.status == 0 else { throw HarnessError("init failed: \(result.stderr)") }
    }

    /// The shipped access policy (or `access` as access.toml), with `settings` as settings.toml,
    /// where the daemon looks for them.
    public func writePolicy(access: String? = nil, settings: String) throws {
        let policy = configDir + "/policy"
        try FileManager.default.createDirectory(atPath: policy, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let access {
            try access.write(toFile: policy + "/access.toml", atomically: false, encoding: .utf8)
        } else {
            try FileManager.default.copyItem(atPath: Self.repository + "/policy/access.toml", toPath: policy + "/access.toml")
        }
        try settings.write(toFile: policy + "/settings.toml", atomically: false, encoding: .utf8)
        for name in ["access.toml", "settings.toml"] { chmod(policy + "/" + name, 0o600) }
    }

    /// Starts `sortedvault daemon` and waits (at most `timeout` seconds) until its socket answers.
    /// `prefix` runs it through another command that execs it (e.g. `prlimit --memlock=0`).
    /// Starts `sortedvault daemon EXTRA…` and waits until `socketPath` (this world's socket unless
    /// told, for a daemon given `--socket`) answers.
    public func startDaemon(extraArguments: [String] = [], prefix: [String] = [], timeout: TimeInterval = 600, socketPath: String? = nil) throws {
        let log = open(daemonLogPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(log); close(null) }
        let process = try Subprocess.spawn(prefix + [Self.executable, "daemon"] + extraArguments, environment: environment,
                                           stdin: null, stdout: log, stderr: log)
        daemon = process
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while Date() < deadline {
            if socketAnswers(socketPath) { return }
            if process.hasExited(status: &status) {
                daemon = nil
                throw HarnessError("the daemon exited with \(status): \(daemonOutput())")
            }
            usleep(5_000)
        }
        throw HarnessError("the daemon did not open its socket in \(Int(timeout)) s: \(daemonOutput())")
    }

    /// Sends `signal` (SIGTERM unless told) and waits; returns the exit status.
    @discardableResult
    public func stopDaemon(with signal: Int32 = SIGTERM) -> Int32 {
        guard let daemon else { return -1 }
        daemon.signal(signal)
        self.daemon = nil
        return daemon.wait()
    }

    /// SIGKILL, as a crash.
    public func killDaemon() {
        guard let daemon else { return }
        daemon.signal(SIGKILL)
        daemon.wait()
        self.daemon = nil
    }

    /// The daemon's log, as bytes; throws when there is none, so that "the log holds no secret"
    /// cannot pass on a log that was never written.
    public func daemonLog() throws -> Data {
        guard let bytes = FileManager.default.contents(atPath: daemonLogPath) else {
            throw HarnessError("there is no daemon log at \(daemonLogPath)")
        }
        return bytes
    }

    /// Whether the daemon's log holds `text`'s exact bytes (whatever else it holds, UTF-8 or not).
    public func daemonLogged(_ text: String) throws -> Bool {
        try daemonLog().range(of: Data(text.utf8)) != nil
    }

    /// The daemon's log as text, for messages and positive checks (a missing log says so).
    public func daemonOutput() -> String {
        guard let bytes = try? daemonLog() else { return "<no daemon log at \(daemonLogPath)>" }
        return String(decoding: bytes, as: UTF8.self)
    }

    public func socketAnswers(_ path: String? = nil) -> Bool {
        let socket = path ?? self.socket
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socket.utf8)) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    /// Daemons started on demand by the CLI are not our child: find them by their socket argument-free
    /// environment (their XDG_RUNTIME_DIR is ours) and kill them.
    public func killStrayDaemons() {
        for pid in processesOfThisWorld() { kill(pid, SIGKILL) }
    }

    /// Processes whose environment has this world's XDG_RUNTIME_DIR: the daemons the CLI started
    /// on demand (and any command still running). Reading another process's environment needs
    /// the same uid and, for the non-dumpable daemon, root.
    public func processesOfThisWorld() -> [Int32] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry), pid != getpid(),
                  let environ = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                  environ.range(of: Data("XDG_RUNTIME_DIR=\(runtimeDir)\0".utf8)) != nil else { return nil }
            return pid
        }
    }

    /// All bytes of the vault's data files.
    public func dataFiles() -> [(String, Data)] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dataDir)) ?? []).compactMap { name in
            FileManager.default.contents(atPath: dataDir + "/" + name).map { (name, $0) }
        }
    }
}

