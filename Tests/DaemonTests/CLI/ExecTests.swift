import Foundation
import TestSupport
import Testing
import Varlink
import VaultClient
import VaultCore
import VaultTesting

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// `sortedvault exec --session`, with a live daemon and the test OAuth2 provider.
    @Suite struct ExecTests {
        static let key = try! ItemKey(service: "com.sorted.api", account: "ada")

        /// A daemon holding ada's login at a real provider.
        static func signedIn() async throws -> (OAuthTestProvider, CLIHarness, SessionClient) {
            let provider = try OAuthTestProvider()
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let sessions = SessionClient(socketPath: cli.socket)
            guard case .object(let response) = try JSONValue.parse(try await provider.signIn()) else { throw HarnessError("bad token response") }
            try await sessions.save(tokenResponse: response, provider: try provider.provider(), for: key)
            return (provider, cli, sessions)
        }

        /// Starts `sortedvault exec … -- sh -c SCRIPT` in the background; SCRIPT can write to `$DIR`
        /// (the script's own umask is reset to 022 so its files are ordinary).
        static func startExec(_ cli: CLIHarness, _ script: String, env: String = "TOKEN_FILE") throws -> Subprocess {
            let log = open(cli.root + "/exec.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            defer { close(log); close(null) }
            var environment = cli.environment
            environment["DIR"] = cli.root
            // Under a hostile umask (0277 would make the directory 0500 and the file 0400): the modes
            // must still come out exactly 0700 and 0600.
            return try Subprocess.spawn(["/bin/sh", "-c", #"umask 0277; exec "$@""#, "sh",
                                         CLIHarness.executable, "exec", "--session", key.service, key.account, "--env", env, "--", "/bin/sh", "-c", "umask 022; " + script],
                                        environment: environment, stdin: null, stdout: log, stderr: log)
        }

        /// Polls (bounded) until `path` holds text.
        static func waitForFile(_ path: String) async throws -> String {
            let deadline = ContinuousClock.now + .seconds(600)
            while ContinuousClock.now < deadline {
                if let data = FileManager.default.contents(atPath: path), !data.isEmpty { return String(decoding: data, as: UTF8.self) }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw HarnessError("\(path) was not written in 600 s")
        }

        @Test func theCommandReadsTheTokenFromAPrivateFileAndItsEnvironmentHoldsOnlyThePath() async throws {
            let (provider, cli, sessions) = try await Self.signedIn()
            _ = provider
            let exec = try Self.startExec(cli, #"printf %s "$TOKEN_FILE" > "$DIR/path"; echo $$ > "$DIR/pid"; exec sleep 300"#)
            let path = try await Self.waitForFile(cli.root + "/path")
            let pid = try await Self.waitForFile(cli.root + "/pid").trimmingCharacters(in: .whitespacesAndNewlines)
            let token = try #require(FileManager.default.contents(atPath: path))
            let current = try await sessions.autoLogin(Self.key).grant!.accessToken.withUnsafeBytes { Data($0) }
            #expect(token == current)

            var status = stat()
            #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600 && status.st_uid == getuid())
            #expect(stat((path as NSString).deletingLastPathComponent, &status) == 0 && status.st_mode & 0o777 == 0o700)
            let environ = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/environ"))
            #expect(environ.range(of: token) == nil)
            #expect(environ.range(of: Data("TOKEN_FILE=\(path)\0".utf8)) != nil)
            let cmdline = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"))
            #expect(cmdline.range(of: token) == nil)

            // A forced refresh while the command runs: the file follows, atomically.
            let reader = FileWatcher(path: path)
            reader.start()
            let refreshed = try #require(try await sessions.refresh(Self.key).grant).accessToken.withUnsafeBytes { Data($0) }
            #expect(refreshed != token)
            // The reader's own sight of the new token is the event: the test's read of the file can
            // come before the reader thread's next one, on a loaded machine by seconds.
            try await waitUntil("the reader to see the refreshed token") { reader.hasSeen(refreshed) }
            let (seen, missing) = reader.stop()
            #expect(FileManager.default.contents(atPath: path) == refreshed)
            #expect(seen.isSubset(of: [token, refreshed]), "a reader saw a partial or foreign token")
            #expect(seen.contains(refreshed))
            #expect(missing == 0, "a reader found no file \(missing) times during the rewrite")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
            #expect(leftovers == [(path as NSString).lastPathComponent])

            // The command is killed: exec reports it and the file goes.
            kill(pid_t(pid)!, SIGKILL)
            #expect(exec.wait() == 128 + SIGKILL)
            #expect(!FileManager.default.fileExists(atPath: path))
            cli.stopDaemon()
        }

        @Test func theFileIsGoneAfterTheCommandExitsAndWhenExecIsTerminated() async throws {
            let (_, cli, sessions) = try await Self.signedIn()
            let current = try await sessions.autoLogin(Self.key).grant!.accessToken.withUnsafeBytes { Data($0) }
            let finished = try Self.startExec(cli, #"cat "$SORTEDVAULT_TOKEN_FILE" > "$DIR/copy"; printf %s "$SORTEDVAULT_TOKEN_FILE" > "$DIR/path"; exit 3"#,
                                              env: "SORTEDVAULT_TOKEN_FILE")
            #expect(finished.wait() == 3)
            #expect(FileManager.default.contents(atPath: cli.root + "/copy") == current)
            let path = try await Self.waitForFile(cli.root + "/path")
            #expect(!FileManager.default.fileExists(atPath: path))

            let terminated = try Self.startExec(cli, #"printf %s "$TOKEN_FILE" > "$DIR/path2"; echo $$ > "$DIR/pid2"; exec sleep 300"#)
            let path2 = try await Self.waitForFile(cli.root + "/path2")
            let pid = pid_t(try await Self.waitForFile(cli.root + "/pid2").trimmingCharacters(in: .whitespacesAndNewlines))!
            #expect(FileManager.default.fileExists(atPath: path2))
            terminated.signal(SIGTERM)
            #expect(terminated.wait() == 128 + SIGTERM)
            #expect(!FileManager.default.fileExists(atPath: path2))
            #expect(kill(pid, 0) != 0, "the command outlived sortedvault exec")
            cli.stopDaemon()
        }

        /// With `--socket` elsewhere the token directory stays under the caller's own
        /// XDG_RUNTIME_DIR (it was put beside the socket's directory, in someone else's if shared).
        @Test func theTokenFileIsInTheCallersRuntimeDirectoryWhateverTheSocket() async throws {
            let provider = try OAuthTestProvider()
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            let elsewhere = cli.root + "/elsewhere"
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try cli.startDaemon(extraArguments: ["--socket", elsewhere + "/socket"], socketPath: elsewhere + "/socket")
            defer { cli.stopDaemon() }
            let sessions = SessionClient(socketPath: elsewhere + "/socket")
            guard case .object(let response) = try JSONValue.parse(try await provider.signIn()) else { throw HarnessError("bad token response") }
            try await sessions.save(tokenResponse: response, provider: try provider.provider(), for: Self.key)
            let result = try cli.run(["exec", "--socket", elsewhere + "/socket", "--session", Self.key.service, Self.key.account, "--",
                                      "/bin/sh", "-c", #"printf %s "$SORTEDVAULT_TOKEN_FILE""#])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.text.hasPrefix(cli.runtimeDir + "/sortedvault/exec/token-"), "the token file was at \(result.text)")
            #expect(!FileManager.default.fileExists(atPath: cli.root + "/sortedvault"))
        }

        /// The exec directory swapped for a symlink while the command runs: the next
        /// refresh is written through the descriptor of the directory that was checked, never into
        /// the symlink's target (the old code followed the path and wrote the token there).
        @Test func aDirectorySwappedForASymlinkRedirectsNoRefresh() async throws {
            let (provider, cli, sessions) = try await Self.signedIn()
            _ = provider
            defer { cli.stopDaemon() }
            let exec = try Self.startExec(cli, #"printf %s "$TOKEN_FILE" > "$DIR/path"; exec sleep 300"#)
            defer { exec.signal(SIGTERM); exec.wait() }
            let path = try await Self.waitForFile(cli.root + "/path")
            let name = (path as NSString).lastPathComponent
            let execDirectory = cli.runtimeDir + "/sortedvault/exec"
            let trap = cli.root + "/trap"
            try FileManager.default.createDirectory(atPath: trap, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            #expect(rename(execDirectory, execDirectory + ".moved") == 0)
            #expect(symlink(trap, execDirectory) == 0)
            let refreshed = try #require(try await sessions.refresh(Self.key).grant).accessToken.withUnsafeBytes { Data($0) }
            let moved = execDirectory + ".moved/" + name
            let deadline = ContinuousClock.now + .seconds(600)  // a bound on failing only
            while FileManager.default.contents(atPath: moved) != refreshed, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(FileManager.default.contents(atPath: moved) == refreshed, "the refresh was not written to the checked directory")
            #expect(try FileManager.default.contentsOfDirectory(atPath: trap) == [], "the refresh followed the symlink")
        }

        @Test func aCommandIsNotStartedWithoutAValidLogin() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let result = try cli.run(["exec", "--session", "com.sorted.api", "nobody", "--", "/bin/sh", "-c", "touch \(cli.root)/ran"])
            #expect(result.status == 8, "\(result.stderr)")
            #expect(result.stderr.contains("sign in again"))
            #expect(!FileManager.default.fileExists(atPath: cli.root + "/ran"))
            cli.stopDaemon()
        }
    }
}

/// Reads a file in a tight loop on a thread of its own, recording every distinct content and how
/// often the file was missing: what a command polling its token file would see.
final class FileWatcher: @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    private var running = true
    private var seen: Set<Data> = []
    private var missing = 0
    private let done = DispatchSemaphore(value: 0)

    init(path: String) { self.path = path }

    func start() {
        Thread { [self] in
            while lock.withLock({ running }) {
                let content = FileManager.default.contents(atPath: path)
                lock.withLock {
                    if let content { seen.insert(content) } else { missing += 1 }
                }
            }
            done.signal()
        }.start()
    }

    /// Whether the reader has read `content` from the file.
    func hasSeen(_ content: Data) -> Bool { lock.withLock { seen.contains(content) } }

    func stop() -> (Set<Data>, Int) {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { (seen, missing) }
    }
}
