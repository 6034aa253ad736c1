import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `Tests/Support/git-http-server.py` on 127.0.0.1: `git http-backend` behind HTTP Basic, accepting
/// only a password that the test OAuth2 provider's introspection calls an active access token.
/// Holds one bare repository, `repo.git`, with one commit on `main`. Stopped (SIGTERM) by `stop()`.
final class GitHTTPServer: @unchecked Sendable {
    static let script = CLIHarness.repository + "/Tests/Support/git-http-server.py"

    let root: String
    private(set) var port = 0
    private var process: Subprocess?

    var repositoryURL: String { "http://127.0.0.1:\(port)/repo.git" }
    var hostAndPort: String { "127.0.0.1:\(port)" }

    init(root: String, provider: OAuthTestProvider, environment: [String: String]) throws {
        self.root = root
        let projects = root + "/repos", work = root + "/seed"
        try FileManager.default.createDirectory(atPath: projects, withIntermediateDirectories: true)
        for argv in [["git", "init", "-q", "--bare", projects + "/repo.git"],
                     ["git", "init", "-q", "-b", "main", work],
                     ["git", "-C", work, "-c", "user.name=test", "-c", "user.email=test@invalid", "commit", "-q", "--allow-empty", "-m", "first"],
                     ["git", "-C", work, "push", "-q", projects + "/repo.git", "main"],
                     ["git", "-C", projects + "/repo.git", "symbolic-ref", "HEAD", "refs/heads/main"]] {
            let (status, _, err) = try Subprocess.run(["/usr/bin/env"] + argv, environment: environment, input: Data())
            guard status == 0 else { throw HarnessError("\(argv.joined(separator: " ")) failed: \(String(decoding: err, as: UTF8.self))") }
        }
        let secretFile = root + "/client-secret"
        try OAuthTestProvider.clientSecret.write(toFile: secretFile, atomically: true, encoding: .utf8)
        let portFile = root + "/git-port"
        let log = open(root + "/git-server.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(log); close(null) }
        let child = try Subprocess.spawn(
            [OAuthTestProvider.python, Self.script, "--project-root", projects, "--introspect", provider.base + "/o/introspect/",
             "--client-id", OAuthTestProvider.clientID, "--client-secret-file", secretFile, "--port-file", portFile],
            environment: environment, stdin: null, stdout: log, stderr: log)
        process = child
        let deadline = Date().addingTimeInterval(20)
        var status: Int32 = 0
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let number = Int(text) {
                port = number
                return
            }
            if child.hasExited(status: &status) {
                process = nil
                throw HarnessError("the git HTTP server exited with \(status)")
            }
            usleep(20_000)
        }
        throw HarnessError("the git HTTP server did not start in 20 s")
    }

    deinit { stop() }

    func stop() {
        guard let process else { return }
        process.signal(SIGTERM)
        process.wait()
        self.process = nil
    }
}
