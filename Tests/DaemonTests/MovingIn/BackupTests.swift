import Foundation
import TestSupport
import Testing
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// `sortedvault export` and `sortedvault import FILE.age` with real peers: the daemon seals the
    /// backup, Debian's `age` opens it (identity file and passphrase at its prompt), a file `age`
    /// sealed restores, and a second machine — another vault and daemon — gets the items and the
    /// login back, which then answers `session autologin` without a provider.
    @Suite struct BackupTests {
        static let item = "ghp_Backup+Secret/42"
        static let accessToken = "backup-access-token-\(UUID().uuidString.prefix(6))"
        static let refreshToken = "backup-refresh-token-\(UUID().uuidString.prefix(6))"

        /// A vault with two items (one with a label and attributes) and one login, its daemon running.
        func source() throws -> CLIHarness {
            try CIRequirement.require(AgeTool.available, AgeTool.missing)
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "git:https://git.example.com", "alice", "--label", "work git", "--attribute", "team=core"],
                                input: Data(Self.item.utf8)).status == 0)
            #expect(try cli.run(["store", "com.example.api", "bot"], input: Data("second-secret".utf8)).status == 0)
            // A login as a client app saves it; its endpoints are never called here (the token is valid).
            let response = #"{"access_token":"\#(Self.accessToken)","token_type":"Bearer","expires_in":86400,"refresh_token":"\#(Self.refreshToken)","scope":"read"}"#
            let saved = try cli.run(["session", "save", "com.example.app", "ada", "--token-endpoint", "http://127.0.0.1:9/token",
                                     "--client-id", "backup-test"], input: Data(response.utf8))
            #expect(saved.status == 0, "\(saved.stderr)")
            return cli
        }

        /// Another machine: an empty vault and its daemon.
        func target() throws -> CLIHarness {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            return cli
        }

        /// Runs `arguments` with `passphrase` on descriptor 3, from a file of mode 0600: never on a
        /// command line, not even the shell's that opens the descriptor.
        func withPassphrase(_ cli: CLIHarness, _ arguments: [String], _ passphrase: String) throws -> CLIHarness.Result {
            let path = cli.root + "/passphrase-\(UUID().uuidString.prefix(8))"
            guard FileManager.default.createFile(atPath: path, contents: Data((passphrase + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
                throw HarnessError("cannot write \(path)")
            }
            defer { try? FileManager.default.removeItem(atPath: path) }
            return try cli.run(arguments + ["--passphrase-fd", "3"], prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3< \(path)"])
        }

        func expectRestored(_ cli: CLIHarness) async throws {
            #expect(try cli.run(["retrieve", "git:https://git.example.com", "alice"]).text == Self.item)
            #expect(try cli.run(["retrieve", "com.example.api", "bot"]).text == "second-secret")
            let listed = try #require(try await cli.client.list(service: "git:https://git.example.com").first)
            #expect(listed.label == "work git" && listed.attributes == ["team": "core"], "label and attributes were not restored: \(listed)")
            let login = try cli.run(["session", "autologin", "com.example.app", "ada"])
            #expect(login.status == 0 && login.text == Self.accessToken, "\(login.stderr)")
        }

        @Test func aBackupForARecipientOpensWithAgeAndRestoresOnAnotherMachine() async throws {
            let cli = try source()
            defer { cli.stopDaemon() }
            let tool = try AgeTool()
            try tool.run([AgeTool.keygen, "-o", tool.path("key.txt")])
            let recipient = try tool.run([AgeTool.keygen, "-y", tool.path("key.txt")]).output.trimmingCharacters(in: .whitespacesAndNewlines)
            let file = cli.root + "/backup.age"
            let exported = try cli.run(["export", "--to", file, "--recipient", recipient])
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(exported.text.contains("2 items and 1 login"), "\(exported.text)")
            #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
            let sealed = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(sealed.starts(with: Data("age-encryption.org/v1\n".utf8)))
            #expect(sealed.range(of: Data(Self.refreshToken.utf8)) == nil && sealed.range(of: Data("com.example".utf8)) == nil)

            // Debian's age opens it: the documented JSON lines, refresh token included.
            try tool.run([AgeTool.age, "-d", "-i", tool.path("key.txt"), "-o", tool.path("plain"), file])
            let lines = String(decoding: try tool.read("plain"), as: UTF8.self).split(separator: "\n").map(String.init)
            #expect(lines.count == 4)
            let header = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
            #expect(header?["format"] as? String == "org.sortedvault.backup" && header?["version"] as? Int == 1)
            #expect(header?["items"] as? Int == 2 && header?["logins"] as? Int == 1)
            let login = try #require(lines.first { $0.hasPrefix("{\"login\"") })
            let fields = try #require((try JSONSerialization.jsonObject(with: Data(login.utf8)) as? [String: Any])?["login"] as? [String: Any])
            #expect(fields["refreshToken"] as? String == Data(Self.refreshToken.utf8).base64EncodedString())
            #expect(lines.contains { $0.contains(Data(Self.item.utf8).base64EncodedString()) })

            // The access log says who exported, and for whom.
            let log = try #require(DaemonSuite.AccessLogTests.accessLogText(cli.accessLogPath, containing: "operation=\"export\" note="))
            #expect(log.contains(recipient) && log.contains("SHA-256"), "\(log)")

            // Another machine restores it; a second run changes nothing.
            let other = try target()
            defer { other.stopDaemon() }
            let restored = try other.run(["import", file, "--identity", tool.path("key.txt")])
            #expect(restored.status == 0, "\(restored.stderr)")
            #expect(restored.text.contains("Stored 2 items.") && restored.text.contains("Logins: 1 restored"), "\(restored.text)")
            try await expectRestored(other)
            // The restore is an owner line of the access log: counts, no item's name.
            let restoredLog = try String(contentsOfFile: other.accessLogPath, encoding: .utf8)
            #expect(restoredLog.contains("operation=\"import\" note=\"restored the backup \(file)"), "\(restoredLog)")
            #expect(restoredLog.contains("items 2 stored, 0 kept, logins 1 restored"), "\(restoredLog)")
            #expect(!restoredLog.contains("com.example") && !restoredLog.contains("git.example.com"), "\(restoredLog)")
            let again = try other.run(["import", file, "--identity", tool.path("key.txt")])
            #expect(again.status == 0 && again.text.contains("Stored 0 items.") && again.text.contains("0 restored, 1 already there"),
                    "\(again.text) \(again.stderr)")
            #expect(!restored.text.contains(Self.item) && !restored.stderr.contains(Self.refreshToken))
        }

        /// A passphrase backup opens at age's own prompt; the plaintext sealed again by `age -p`
        /// restores through `sortedvault import`, so either tool reads the other's file.
        @Test func aPassphraseBackupOpensWithAgeAndAnAgeSealedFileRestores() async throws {
            let cli = try source()
            defer { cli.stopDaemon() }
            let tool = try AgeTool()
            let passphrase = "correct horse \(UUID().uuidString.prefix(6))"
            let file = cli.root + "/backup.age"
            let exported = try withPassphrase(cli, ["export", "--to", file, "--armor"], passphrase)
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(try String(contentsOfFile: file, encoding: .utf8).hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----"))
            let secret = SecureBytes(copying: Array(passphrase.utf8))
            let opened = try tool.runAtTerminal([AgeTool.age, "-d", "-o", tool.path("plain"), file], typing: secret, prompts: 1)
            #expect(opened.status == 0, "age -d: \(opened.screen)")
            let sealedByAge = try tool.runAtTerminal([AgeTool.age, "-p", "-o", tool.path("again.age"), tool.path("plain")], typing: secret, prompts: 2)
            #expect(sealedByAge.status == 0, "age -p: \(sealedByAge.screen)")

            let other = try target()
            defer { other.stopDaemon() }
            let restored = try withPassphrase(other, ["import", tool.path("again.age")], passphrase)
            #expect(restored.status == 0, "\(restored.stderr)")
            try await expectRestored(other)
        }

        /// A wrong passphrase (exit 5), a changed byte or a cut-off file (exit 6): refused, with a
        /// message that says so, and nothing stored.
        @Test func aDamagedBackupOrAWrongPassphraseIsRefusedAndChangesNothing() throws {
            let cli = try source()
            defer { cli.stopDaemon() }
            let file = cli.root + "/backup.age"
            #expect(try withPassphrase(cli, ["export", "--to", file], "the right one").status == 0)
            // An existing file is never overwritten.
            let twice = try withPassphrase(cli, ["export", "--to", file], "the right one")
            #expect(twice.status == 64 && twice.stderr.contains("exists already"), "\(twice.status) \(twice.stderr)")
            let sealed = try Data(contentsOf: URL(fileURLWithPath: file))

            let other = try target()
            defer { other.stopDaemon() }
            let wrong = try withPassphrase(other, ["import", file], "the wrong one")
            #expect(wrong.status == 5 && wrong.stderr.contains("nothing was imported"), "\(wrong.status) \(wrong.stderr)")
            var changed = sealed
            changed[changed.count - 20] ^= 0x01
            try changed.write(to: URL(fileURLWithPath: other.root + "/changed.age"))
            let tampered = try withPassphrase(other, ["import", other.root + "/changed.age"], "the right one")
            #expect(tampered.status == 6 && tampered.stderr.contains("damaged or was changed"), "\(tampered.status) \(tampered.stderr)")
            try sealed.prefix(sealed.count - 100).write(to: URL(fileURLWithPath: other.root + "/cut.age"))
            let cut = try withPassphrase(other, ["import", other.root + "/cut.age"], "the right one")
            #expect(cut.status == 6, "\(cut.status) \(cut.stderr)")
            #expect(try other.run(["list"]).text.isEmpty, "a refused backup stored something")
            #expect(try other.run(["session", "autologin", "com.example.app", "ada"]).status == 8)
        }

        /// What the vault holds already is kept (an item with another secret, a login with other
        /// tokens), said so, and replaced only when asked.
        @Test func whatTheVaultHoldsIsKeptUnlessReplaceIsAsked() throws {
            let cli = try source()
            defer { cli.stopDaemon() }
            let file = cli.root + "/backup.age"
            #expect(try withPassphrase(cli, ["export", "--to", file], "pass").status == 0)
            #expect(try cli.run(["store", "com.example.api", "bot"], input: Data("newer-secret".utf8)).status == 0)
            let response = #"{"access_token":"newer-access","token_type":"Bearer","expires_in":86400,"refresh_token":"newer-refresh"}"#
            #expect(try cli.run(["session", "save", "com.example.app", "ada", "--token-endpoint", "http://127.0.0.1:9/token",
                                 "--client-id", "backup-test"], input: Data(response.utf8)).status == 0)
            let kept = try withPassphrase(cli, ["import", file], "pass")
            #expect(kept.status == 0, "\(kept.stderr)")
            #expect(kept.text.contains("Kept 1 item") && kept.text.contains("Kept 1 login"), "\(kept.text)")
            #expect(try cli.run(["retrieve", "com.example.api", "bot"]).text == "newer-secret")
            #expect(try cli.run(["session", "autologin", "com.example.app", "ada"]).text == "newer-access")
            let replaced = try withPassphrase(cli, ["import", file, "--on-conflict", "replace"], "pass")
            #expect(replaced.status == 0, "\(replaced.stderr)")
            #expect(try cli.run(["retrieve", "com.example.api", "bot"]).text == "second-secret")
            #expect(try cli.run(["session", "autologin", "com.example.app", "ada"]).text == Self.accessToken)
        }

        /// kill -9 of a restore halfway loses nothing the vault acknowledged: every item there is
        /// whole, and the same restore run again stores exactly the rest.
        @Test func aRestoreKilledHalfwayLosesNothingAndFinishesWhenRunAgain() async throws {
            let count = 300
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            let client = cli.client
            for index in 0..<count {
                try await client.store(SecureBytes(copying: Array("secret-\(index)".utf8)), service: "com.example.bulk", account: "item-\(index)")
            }
            let file = cli.root + "/bulk.age"
            #expect(try withPassphrase(cli, ["export", "--to", file], "bulk").status == 0)

            let other = try target()
            defer { other.stopDaemon() }
            let passphraseFile = other.root + "/bulk-passphrase"
            #expect(FileManager.default.createFile(atPath: passphraseFile, contents: Data("bulk\n".utf8), attributes: [.posixPermissions: 0o600]))
            let argv = ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3< \(passphraseFile)", CLIHarness.executable, "import", file, "--passphrase-fd", "3"]
            let null = open("/dev/null", O_RDWR | O_CLOEXEC)
            defer { close(null) }
            let restore = try Subprocess.spawn(argv, environment: other.environment, stdin: null, stdout: null, stderr: null)
            let otherClient = other.client
            // The restore is under way once the vault counts its first items; then it dies.
            var status: Int32 = 0
            var stored = 0
            while !restore.hasExited(status: &status) {
                stored = try await otherClient.status().items
                if stored >= 20 { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            restore.signal(SIGKILL)
            _ = restore.wait()
            let kept = try await otherClient.list(service: "com.example.bulk")
            for item in kept {
                let secret = try await otherClient.retrieve(item.key).secret
                #expect(secret == SecureBytes(copying: Array("secret-\(item.account.dropFirst("item-".count))".utf8)), "\(item.account) is not whole")
            }
            let again = try withPassphrase(other, ["import", file], "bulk")
            #expect(again.status == 0, "\(again.stderr)")
            // The rest, and no more: the one store the dead restore had sent may still have landed
            // after the listing above (its reply went nowhere).
            let rest = again.text.split(separator: "\n").first { $0.hasPrefix("Stored ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
            #expect(rest == count - kept.count || rest == count - kept.count - 1, "\(kept.count) kept; \(again.text)")
            let all = try await otherClient.list(service: "com.example.bulk")
            #expect(all.count == count)
            for item in all.prefix(20) + all.suffix(20) {
                #expect(try await otherClient.retrieve(item.key).secret == SecureBytes(copying: Array("secret-\(item.account.dropFirst("item-".count))".utf8)))
            }
        }

        /// Every process's command line and environment, read again and again while a backup is made
        /// and restored, never holds a secret of it, nor do the daemons' logs, the access logs or the
        /// commands' output.
        @Test func noSecretShowsInAnyProcessOrLogWhileABackupMovesAround() async throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            let marks = (0..<100).map { "SVMARK\($0)x\(UUID().uuidString.prefix(8))" }
            for (index, mark) in marks.enumerated() {
                try await cli.client.store(SecureBytes(copying: Array(mark.utf8)), service: "com.example.watch", account: "item-\(index)")
            }
            let passphrase = "SVPASS\(UUID().uuidString.prefix(8))"
            let needles = (marks + [passphrase]).map { Array($0.utf8) } + marks.map { Array(Data($0.utf8).base64EncodedString().utf8) }
            let other = try target()
            defer { other.stopDaemon() }

            let watch = ProcessWatch(needles: needles)
            let watching = Thread { watch.run() }
            watching.start()
            defer { watch.stop() }
            let file = cli.root + "/watched.age"
            let exported = try watch.run(cli, ["export", "--to", file], passphrase: passphrase)
            let restored = try watch.run(other, ["import", file], passphrase: passphrase)
            let wrong = try watch.run(other, ["import", file], passphrase: passphrase + "-wrong")
            watch.stop()
            #expect(exported.status == 0 && restored.status == 0 && wrong.status == 5, "\(exported.stderr) \(restored.stderr) \(wrong.stderr)")
            #expect(watch.hits.isEmpty, "a secret showed in \(watch.hits)")
            for text in [exported.text, exported.stderr, restored.text, restored.stderr, wrong.text, wrong.stderr] {
                #expect(!needles.contains { text.utf8.contains($0) }, "a command printed a secret: \(text)")
            }
            for path in [cli.daemonLogPath, other.daemonLogPath, cli.accessLogPath, other.accessLogPath] {
                let log = Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
                #expect(!needles.contains { log.contains($0) }, "\(path) holds a secret")
            }
        }

        /// Export is an owner operation of its own: a policy that lets a program read items does not
        /// let it take them all away in one file.
        @Test func aPolicyWithoutExportRefusesIt() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let policy = cli.configDir + "/policy"
            try cli.writePolicy(access: """
                [[rule]]
                name = "items-only"
                effect = "allow"
                uids = ["@self"]
                operations = ["store", "retrieve", "list", "status"]
                services = ["*"]

                """, settings: String(contentsOfFile: CLIHarness.repository + "/policy/settings.toml", encoding: .utf8))
            try cli.startDaemon(extraArguments: ["--policy-dir", policy])
            defer { cli.stopDaemon() }
            let denied = try withPassphrase(cli, ["export", "--to", cli.root + "/backup.age"], "pass")
            #expect(denied.status == 3, "\(denied.status) \(denied.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.root + "/backup.age"))
        }
    }
}

/// Reads `/proc/*/cmdline` and `/proc/*/environ` of every process it may read, over and over, until
/// stopped, noting any that holds one of `needles`.
final class ProcessWatch: @unchecked Sendable {
    private let needles: [[UInt8]]
    private let lock = NSLock()
    private var stopped = false
    private(set) var hits: [String] = []
    /// The processes the last whole scan read: pid and the program (`argv[0]`) it ran then.
    private var seen: [String: String] = [:]

    init(needles: [[UInt8]]) { self.needles = needles }

    func stop() { lock.withLock { stopped = true } }

    func run() {
        while !lock.withLock({ stopped }) {
            let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { $0.allSatisfy(\.isNumber) } ?? []
            var read: [String: String] = [:]
            for pid in pids {
                for part in ["cmdline", "environ"] {
                    guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/\(part)") else { continue }
                    if part == "cmdline" { read[pid] = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
                    let array = Array(bytes)
                    if needles.contains(where: { array.contains($0) }) {
                        lock.withLock { hits.append("/proc/\(pid)/\(part)") }
                    }
                }
            }
            lock.withLock { seen = read }
        }
    }

    /// Runs `sortedvault ARGS --passphrase-fd 3` in `cli`'s world and hands it the passphrase only
    /// once a whole scan has read the running command, so each command is read at least once
    /// whatever the machine's load (later scans read it, and the daemons, while it works).
    func run(_ cli: CLIHarness, _ arguments: [String], passphrase: String) throws -> (status: Int32, text: String, stderr: String) {
        var input: [Int32] = [0, 0]
        guard pipe(&input) == 0 else { throw HarnessError("pipe failed") }
        _ = fcntl(input[1], F_SETFD, FD_CLOEXEC)
        let output = cli.root + "/watched-\(UUID().uuidString.prefix(8))"
        let out = open(output + ".out", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let err = open(output + ".err", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(out); close(err) }
        let argv = ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3<&0", CLIHarness.executable] + arguments + ["--passphrase-fd", "3"]
        let process = try Subprocess.spawn(argv, environment: cli.environment, stdin: input[0], stdout: out, stderr: err)
        close(input[0])
        let pid = "\(process.pid)"
        // Read as the command itself, after the shell exec'd it and the lean front handed over to
        // sortedvault-cli (one process throughout): it waits for its passphrase meanwhile.
        let read = CLIHarness.eventually(within: 120) { lock.withLock { seen[pid]?.hasSuffix("sortedvault-cli") == true } }
        let line = Array((passphrase + "\n").utf8)
        _ = line.withUnsafeBytes { write(input[1], $0.baseAddress, $0.count) }
        close(input[1])
        let status = process.wait()
        guard read else { throw HarnessError("no scan read the command \(arguments.first ?? "") while it ran (last seen as \(lock.withLock { seen[pid] ?? "nothing" }))") }
        let text = (try? String(contentsOfFile: output + ".out", encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        return (status, text, stderr)
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}

extension String.UTF8View {
    func contains(_ needle: [UInt8]) -> Bool { Array(self).contains(needle) }
}
