import Foundation
import TestSupport
import Testing
import Varlink
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// The owner's decision log (issue 13.6): kept by default, even by a daemon the CLI started on
    /// demand (its stderr is /dev/null), readable with `sortedvault log`, capped, and free of secrets.
    @Suite struct AccessLogTests {
        private static func accessLog(_ cli: CLIHarness) -> String { cli.root + "/home/.local/state/sortedvault/access.log" }

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
            let log = try #require(try? String(contentsOfFile: path, encoding: .utf8), "no access log at \(path)")
            let lines = log.split(separator: "\n")
            let uid = getuid()
            #expect(lines.contains { $0.contains(" allowed uid=\(uid) ") && $0.contains("operation=\"store\"") && $0.contains("service=\"com.example.mail\"")
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

            // `sortedvault log` shows its tail.
            let tail = try cli.run(["log", "-n", "2"])
            #expect(tail.status == 0)
            #expect(tail.text == lines.suffix(2).joined(separator: "\n") + "\n", "sortedvault log -n 2 printed: \(tail.text)")
        }

        @Test func loginsLeaveNoTokenInTheAccessLog() async throws {
            let world = try DaemonSuite.SessionDaemonTests.World()
            let response = try await world.signIn()
            world.clock.advance(by: 3600)
            let refreshed = try await world.sessions.autoLogin(world.key)
            #expect(refreshed.outcome == "refreshed")
            let log = try #require(try? String(contentsOfFile: Self.accessLog(world.cli), encoding: .utf8))
            #expect(log.contains("operation=\"session.save\" service=\"com.sorted.api\""), "\(log)")
            #expect(log.contains("operation=\"session.autologin\" service=\"com.sorted.api\""), "\(log)")
            var needles = [OAuthTestProvider.clientSecret, "ada"]
            for field in ["access_token", "refresh_token"] { if let token = response.jsonField(field) { needles.append(token) } }
            if let token = refreshed.grant?.accessToken.withUnsafeBytes({ String(decoding: $0, as: UTF8.self) }) { needles.append(token) }
            for needle in needles { #expect(!log.contains(needle), "the access log holds a token or the client secret") }
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
            let text = (try? String(contentsOfFile: cli.root + "/journal", encoding: .utf8)) ?? ""
            #expect(text.contains("sortedvault access: ") && text.contains("operation=\"status\""), "\(text)")
            #expect(!FileManager.default.fileExists(atPath: Self.accessLog(cli)))
        }

        @Test func theAccessLogIsCappedAndRotatedOnce() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.startDaemon(extraArguments: ["--access-log-max-bytes", "4096"])
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            for _ in 0..<200 { _ = try connection.call("org.sortedvault.vault.Status") }
            let path = Self.accessLog(cli)
            let directory = (path as NSString).deletingLastPathComponent
            // The state directory holds the vault's generation record too (docs/rollback.md).
            let logs = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("access.log") }
            #expect(logs.sorted() == ["access.log", "access.log.1"])
            for file in [path, path + ".1"] {
                let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? -1
                #expect(size > 0 && size <= 4096, "\(file) is \(size) bytes")
            }
            let last = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").last ?? ""
            #expect(last.contains("operation=\"status\""))
            cli.stopDaemon()
        }
    }
}
