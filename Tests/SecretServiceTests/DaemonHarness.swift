import Foundation
import TestSupport
import VaultClient
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// The built `sortedvault` binary and its daemon in a private HOME and XDG directories, talking to a
/// private keyring (or to no bus at all). The part of DaemonTests' CLIHarness these tests need.
final class DaemonHarness: @unchecked Sendable {
    struct Result {
        let status: Int32
        let stdout: Data
        let stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    let root: String
    /// The session bus the binary is told about; a dead address stands for "no session bus".
    var busAddress: String
    private(set) var daemon: Subprocess?
    var runtimeDir: String { root + "/run" }
    var socket: String { runtimeDir + "/sortedvault/socket" }
    var policyDir: String { root + "/policy" }
    var daemonLogPath: String { root + "/daemon.log" }

    static let executable: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, 4095)
        let bundle = String(decoding: buffer[0..<max(length, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ((bundle as NSString).deletingLastPathComponent as NSString).appendingPathComponent("sortedvault")
    }()

    init(busAddress: String) throws {
        self.busAddress = busAddress
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sv-ss-\(UUID().uuidString.prefix(8))").path
        for directory in [root, runtimeDir, root + "/data", root + "/config", root + "/home", policyDir] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw HarnessError("the sortedvault binary is not built at \(Self.executable): run `swift build` first")
        }
    }

    deinit {
        if let daemon {
            daemon.signal(SIGKILL)
            daemon.wait()
        }
        try? FileManager.default.removeItem(atPath: root)
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = root + "/home"
        environment["XDG_RUNTIME_DIR"] = runtimeDir
        environment["XDG_DATA_HOME"] = root + "/data"
        environment["XDG_CONFIG_HOME"] = root + "/config"
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        return environment
    }

    /// `sortedvault ARGS` (never starting a daemon on demand: tests start and stop it themselves).
    @discardableResult
    func run(_ arguments: [String], input: Data = Data()) throws -> Result {
        let (status, out, err) = try Subprocess.run([Self.executable] + arguments + ["--no-autostart"],
                                                    environment: environment, input: input)
        return Result(status: status, stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }

    /// `sortedvault init --key-source secret-service` with `recovery` as the recovery passphrase.
    func initSecretServiceVault(recovery: String) throws -> Result {
        let (status, out, err) = try Subprocess.run(
            [Self.executable, "init", "--key-source", "secret-service", "--passphrase-fd", "0", "--unsafe-kdf-cost-for-testing"],
            environment: environment, input: Data((recovery + "\n").utf8))
        return Result(status: status, stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }

    /// The shipped policy, with `settings` as settings.toml.
    func writePolicy(settings: String) throws {
        let access = CLIPaths.repository + "/policy/access.toml"
        try FileManager.default.copyItem(atPath: access, toPath: policyDir + "/access.toml")
        try settings.write(toFile: policyDir + "/settings.toml", atomically: false, encoding: .utf8)
        for name in ["access.toml", "settings.toml"] {
            chmod(policyDir + "/" + name, 0o600)
        }
    }

    /// Starts `sortedvault daemon` and waits (at most `timeout`) until its socket answers.
    func startDaemon(timeout: TimeInterval = 20) throws {
        let log = open(daemonLogPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(log); close(null) }
        var arguments = [Self.executable, "daemon"]
        if FileManager.default.fileExists(atPath: policyDir + "/access.toml") { arguments += ["--policy-dir", policyDir] }
        let process = try Subprocess.spawn(arguments, environment: environment, stdin: null, stdout: log, stderr: log)
        daemon = process
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while Date() < deadline {
            if socketAnswers() { return }
            if process.hasExited(status: &status) {
                daemon = nil
                throw HarnessError("the daemon exited with \(status): \(daemonOutput())")
            }
            usleep(5_000)
        }
        throw HarnessError("the daemon did not open its socket in \(timeout) s: \(daemonOutput())")
    }

    @discardableResult
    func stopDaemon() -> Int32 {
        guard let daemon else { return -1 }
        daemon.signal(SIGTERM)
        self.daemon = nil
        return daemon.wait()
    }

    func daemonOutput() -> String {
        (try? String(contentsOfFile: daemonLogPath, encoding: .utf8)) ?? ""
    }

    var client: VaultClient { VaultClient(socketPath: socket, timeout: .seconds(60)) }

    /// Polls `Status` until the vault reports `locked == false`, for at most `timeout`.
    func waitUntilUnlocked(timeout: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await !client.status().locked { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func socketAnswers() -> Bool {
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
}

enum CLIPaths {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
}
