import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A test server written in Python under `Tests/Support` (the repo's venv), run on 127.0.0.1 in a
/// state directory of its own until the instance goes away. The script writes `STATE/port` once it
/// listens; this waits for that file, or for the script to exit (which fails with its log).
///
/// ```swift
/// let front = try ScriptServer("https-front/front.py", ["--certificate", "expired", "--backend-port", "\(provider.port)"])
/// let caFile = front.stateDirectory + "/ca.pem"
/// ```
public final class ScriptServer: @unchecked Sendable {
    public let stateDirectory: String
    public let port: Int
    private let process: Subprocess

    public init(_ script: String, _ arguments: [String] = []) throws {
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-script-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        guard FileManager.default.isExecutableFile(atPath: ProviderServer.python) else {
            throw HarnessError("no Python venv at \(ProviderServer.python): run scripts/install-deps")
        }
        let log = open(stateDirectory + "/server.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(log); close(null) }
        let argv = [ProviderServer.python, ProviderServer.supportDirectory + "/" + script, "--state-dir", stateDirectory] + arguments
        process = try Subprocess.spawn(argv, environment: ProcessInfo.processInfo.environment, stdin: null, stdout: log, stderr: log)
        var status: Int32 = 0
        // Waits for the event (the port file), not for a time; the script's exit ends the wait too.
        while true {
            if let text = try? String(contentsOfFile: stateDirectory + "/port", encoding: .utf8), let number = Int(text) {
                port = number
                return
            }
            if process.hasExited(status: &status) {
                let text = (try? String(contentsOfFile: stateDirectory + "/server.log", encoding: .utf8)) ?? ""
                throw HarnessError("\(script) exited with \(status): \(text)")
            }
            usleep(20_000)
        }
    }

    deinit {
        process.signal(SIGTERM)
        process.wait()
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }
}
