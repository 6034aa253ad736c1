import Foundation
import TestSupport
import Testing
import Varlink
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// The owner's decision log: kept by default, even by a daemon the CLI started on
    /// demand (its stderr is /dev/null), readable with `sortedvault log`, capped, and free of secrets.
    @Suite struct AccessLogTests {
        private static func accessLog(_ cli: CLIHarness) -> String { cli.root + "/home/.local/state/sortedvault/access.log" }

        /// The access log's text once it holds `line` lines containing `mark`: the daemon writes the
        /// log off the request path, within 100 ms of a call, so a reply can arrive before its line.
        /// Still nil (the test fails) when the lines never come.
        static func accessLogText(_ path: String, lines count: Int = 1, containing mark: String) -> String? {
            var text: String?
            _ = CLIHarness.eventually {
                text = try? String(contentsOfFile: path, encoding: .utf8)
                return (text?.components(separatedBy: mark).count ?? 0) - 1 >= count
            }
            return text
        }

        @Test func aDaemonStartedOnDemandLogsEveryDecisionAndNoSecret() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let policy = cli.configDir + "/policy"
            try cli.writePolicy(access: """
                [[rule]]
                name = "owner"
                effect = "allow"
                uids = ["@self"]
                operations = ["*"]
                services = ["*"]

                [[rule]]
                name = "keep-mail"
                effect = "deny"
                uids = ["@self"]
                operations = ["delete"]
                services = ["com.example.mail"]

                """, settings: String(contentsOfFile: CLIHarness.repository + "/policy/settings.toml", encoding: .utf8))
            let secret = Array(SecureRandom.bytes(count: 48).map { UInt8(ascii: "a") + $0 % 26 })  // printable, easy to spot
            #expect(!cli.socketAnswers())
            #expect(try cli.run(["store", "com.example.mail", "ada@example.com", "--policy-dir", policy], input: Data(secret)).status == 0)
            #expect(try cli.run(["retrieve", "com.example.mail", "ada@example.com", "--policy-dir", policy]).stdout == Data(secret))
            #expect(try cli.run(["delete", "com.example.mail", "ada@example.com", "--policy-dir", policy]).status == 3)

            let path = Self.accessLog(cli)
            let log = try #require(Self.accessLogText(path, containing: "operation=\"delete\""), "no access log with the delete at \(path)")
            let lines = log.split(separator: "\n")
            let uid = getuid()
            // At rest the service is a keyed pseudonym, never its name.
            #expect(!log.contains("com.example.mail"), "the access log holds a service name in plaintext: \(log)")
            #expect(lines.contains { $0.contains(" allowed uid=\(uid) ") && $0.contains("operation=\"store\"") && $0.contains("service=<private:")
                && $0.contains("/sortedvault\" operation=") && $0.contains("by rule owner (\(policy)/access.toml:1)") }, "\(log)")
            #expect(lines.contains { $0.contains(" allowed ") && $0.contains("operation=\"retrieve\"") }, "\(log)")
            #expect(lines.contains { $0.contains(" denied ") && $0.contains("operation=\"delete\"") && $0.contains("by rule keep-mail (\(policy)/access.toml:8)") }, "\(log)")
            #expect(lines.allSatisfy { $0.contains(" pid=") }, "\(log)")
            // Never the secret (raw, base64, hex) nor the account name.
            let bytes = Data(log.utf8)
            for needle in [Data(secret), Data(Data(secret).base64EncodedString().utf8),
                           Data(secret.map { String(format: "%02x", $0) }.joined().utf8), Data("ada@example.com".utf8)] {
                #expect(bytes.range(of: needle) == nil, "the access log holds a secret or an account name")
            }
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)

            // `sortedvault log` shows its tail, with the names the unlocked daemon knows.
            let tail = try cli.run(["log", "-n", "2"])
            #expect(tail.status == 0)
            let named = lines.suffix(2).map { String($0).replacing(#/service=<private:[0-9a-f]{16}>/#, with: "service=\"com.example.mail\"") }
            #expect(tail.text == named.joined(separator: "\n") + "\n", "sortedvault log -n 2 printed: \(tail.text)")
        }

        @Test func loginsLeaveNoTokenInTheAccessLog() async throws {
            let world = try DaemonSuite.SessionDaemonTests.World()
            let response = try await world.signIn()
            world.clock.advance(by: 3600)
            let refreshed = try await world.sessions.autoLogin(world.key)
            #expect(refreshed.outcome == "refreshed")
            let log = try #require(Self.accessLogText(Self.accessLog(world.cli), containing: "operation=\"session.autologin\""))
            #expect(log.contains("operation=\"session.save\" service=<private:") && !log.contains("com.sorted.api"), "\(log)")
            let shown = try world.cli.run(["log", "-n", "100"]).text
            #expect(shown.contains("operation=\"session.save\" service=\"com.sorted.api\""), "\(shown)")
            #expect(shown.contains("operation=\"session.autologin\" service=\"com.sorted.api\""), "\(shown)")
            // Every token the login saw is looked for: a missing one would make the check prove less than it says.
            var needles = [OAuthTestProvider.clientSecret, "ada"]
            for field in ["access_token", "refresh_token"] {
                needles.append(try #require(response.jsonField(field), "the provider's token response has no \(field)"))
            }
            let grant = try #require(refreshed.grant, "the refresh returned no access token")
            needles.append(grant.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
            #expect(needles.allSatisfy { !$0.isEmpty })
            // Pseudonyms are hex, which may spell a short needle such as "ada" by chance: look past them.
            let readable = log.replacingOccurrences(of: #"<private:[0-9a-f]+>"#, with: "<private>", options: .regularExpression)
            for needle in needles { #expect(!readable.contains(needle), "the access log holds a token or the client secret") }
            world.cli.stopDaemon()
        }

        @Test func underSystemdTheDecisionsGoToTheJournalStreamNotToAFile() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            // systemd connects stderr to the journal and names that stream in JOURNAL_STREAM ("device:inode").
            let journal = open(cli.root + "/journal", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            defer { close(journal); close(null) }
            var info = stat()
            #expect(fstat(journal, &info) == 0)
            var environment = cli.environment
            environment["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
            let daemon = try Subprocess.spawn([CLIHarness.executable, "daemon"], environment: environment, stdin: null, stdout: journal, stderr: journal)
            defer { daemon.signal(SIGTERM); daemon.wait() }
            #expect(CLIHarness.eventually { cli.socketAnswers() })
            #expect(try cli.run(["status"]).status == 0)
            let text = Self.accessLogText(cli.root + "/journal", containing: "operation=\"status\"") ?? ""
            #expect(text.contains("sortedvault access: ") && text.contains("operation=\"status\""), "\(text)")
            #expect(!FileManager.default.fileExists(atPath: Self.accessLog(cli)))
        }

        /// Every rotated file is kept (by time, not one copy): 200 calls at a 4 KiB cap lose no line,
        /// and `sortedvault log` reads back across the files in order.
        @Test func theAccessLogIsCappedAndRotatedWithoutLosingALine() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.startDaemon(extraArguments: ["--access-log-max-bytes", "4096"])
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            for _ in 0..<200 { _ = try connection.call("org.sortedvault.vault.Status") }
            // A stopped daemon has written every line: it flushes the log at shutdown.
            connection.close()
            cli.stopDaemon()
            let path = Self.accessLog(cli)
            let directory = (path as NSString).deletingLastPathComponent
            // The state directory holds the vault's generation record too (docs/rollback.md).
            let logs = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("access.log") }
            #expect(logs.count > 2 && Set(logs) == Set(["access.log"] + (1..<logs.count).map { "access.log.\($0)" }), "\(logs.sorted())")
            var statusLines = 0
            for file in logs {
                let size = (try FileManager.default.attributesOfItem(atPath: directory + "/" + file)[.size] as? Int) ?? -1
                #expect(size > 0 && size <= 4096, "\(file) is \(size) bytes")
                statusLines += try String(contentsOfFile: directory + "/" + file, encoding: .utf8).components(separatedBy: "operation=\"status\"").count - 1
            }
            #expect(statusLines == 200)
            let shown = try cli.run(["log", "-n", "1000"])
            #expect(shown.status == 0)
            #expect(shown.text.components(separatedBy: "operation=\"status\"").count - 1 == 200)
            let stamps = shown.text.split(separator: "\n").map { $0.prefix(20) }
            #expect(stamps == stamps.sorted(), "sortedvault log printed the files out of order")
        }

        /// `sortedvault log -n 3 --follow | reader`: the three lines reach the pipe before the wait for
        /// new ones, and a line written later follows (standard output is flushed, not held in a buffer).
        @Test func followThroughAPipeShowsTheLastLinesAndThenNewOnes() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            for service in ["com.one", "com.two", "com.three"] {
                #expect(try cli.run(["store", service, "ada"], input: Data("x".utf8)).status == 0)
            }
            var pipe: [Int32] = [0, 0]
            #expect(Glibc.pipe(&pipe) == 0)
            let null = open("/dev/null", O_RDWR | O_CLOEXEC)
            let follower = try Subprocess.spawn([CLIHarness.executable, "log", "-n", "3", "--follow"], environment: cli.environment,
                                                stdin: null, stdout: pipe[1], stderr: null)
            close(pipe[1])
            close(null)
            // Should the lines never come, the follower is ended after a minute, so the read ends
            // and the test fails instead of hanging.
            let watchdog = DispatchWorkItem { follower.signal(SIGTERM) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
            defer { watchdog.cancel(); follower.signal(SIGTERM); follower.wait(); close(pipe[0]) }
            let reader = FileHandle(fileDescriptor: pipe[0], closeOnDealloc: false)
            /// Reads until `text` has arrived; only an end of output (the follower died) ends it early.
            func read(until text: String, into received: inout String) -> Bool {
                while !received.contains(text) {
                    let chunk = reader.availableData
                    if chunk.isEmpty { return false }
                    received += String(decoding: chunk, as: UTF8.self)
                }
                return true
            }
            var received = ""
            #expect(read(until: "service=\"com.three\"", into: &received), "\(received)")
            #expect(try cli.run(["store", "com.four", "ada"], input: Data("x".utf8)).status == 0)
            #expect(read(until: "service=\"com.four\"", into: &received), "\(received)")
        }

        /// A program allowed one operation sends 4,096 denied calls and a program no rule
        /// admits opens 3,000 connections; the owner's lines before and after are still there, and
        /// the refusals are written up to their budget, the rest counted in exact summaries.
        @Test func aFloodOfRefusalsLeavesTheOwnersLinesAndExactCounts() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            let testProcess = SessionNameConfusionTests.testExecutable
            try cli.writePolicy(access: PolicyText.ownerCLIAnd(testProcess, operations: ["retrieve"], services: ["com.app"]), settings: String(contentsOfFile: CLIHarness.repository + "/policy/settings.toml", encoding: .utf8))
            // The budget refills with the daemon's time: on the test's clock, which stands still, a
            // flood slowed by a busy machine is still one burst.
            let clock = cli.manualClock()
            try cli.startDaemon(extraArguments: ["--access-log-max-bytes", "16384", "--unsafe-clock-file", cli.clockFile])
            _ = clock
            #expect(try cli.run(["store", "com.owner.before", "ada"], input: Data("x".utf8)).status == 0)
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            var refused = 0
            for _ in 0..<4096 where (try? connection.call("org.sortedvault.vault.Lock")) == nil { refused += 1 }
            #expect(refused == 4096)
            let python = try PythonRunner(environment: cli.environment, scratch: cli.root)
            let flood = try python.run(["-c", """
                import socket, sys
                for _ in range(3000):
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(sys.argv[1])
                    s.recv(1)  # the daemon closes a refused connection: then it has logged it
                    s.close()
                """, cli.socket])
            #expect(flood.status == 0, "\(flood.stderr)")
            #expect(try cli.run(["store", "com.owner.after", "ada"], input: Data("x".utf8)).status == 0)
            #expect(cli.stopDaemon() == 0)  // writes what is still being counted

            let directory = (Self.accessLog(cli) as NSString).deletingLastPathComponent
            var lines: [String] = []
            for file in try FileManager.default.contentsOfDirectory(atPath: directory) where file.hasPrefix("access.log") {
                lines += try String(contentsOfFile: directory + "/" + file, encoding: .utf8).split(separator: "\n").map(String.init)
            }
            // The owner's two stores, before and after the flood (services are pseudonyms at rest).
            #expect(lines.filter { $0.contains("operation=\"store\" service=<private:") }.count == 2, "the owner's earlier line was pushed out")
            func total(_ operation: String, exe: (String) -> Bool) -> (written: Int, counted: Int) {
                let written = lines.filter { $0.contains(" denied ") && $0.contains("operation=\"\(operation)\"") && exe($0) }.count
                let counted = lines.filter { $0.contains(" summary ") && exe($0) }
                    .map { AccessLogBudgetTests.counted($0)["denied " + operation] ?? 0 }.reduce(0, +)
                return (written, counted)
            }
            let app = total("lock") { $0.contains("exe=\"\(testProcess)\"") }
            #expect(app.written == 20 && app.written + app.counted == 4096, "\(app)")
            let stranger = total("connect") { $0.contains("python") }
            #expect(stranger.written <= 20 && stranger.written + stranger.counted == 3000, "\(stranger)")
            #expect(lines.count < 100, "\(lines.count) lines")
        }
    }
}
