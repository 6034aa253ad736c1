import Foundation
import TestSupport
import Testing
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// The lean `sortedvault` front answers retrieve, store, delete and session autologin by hand
    /// and hands everything else to `sortedvault-cli`: both binaries must answer every command with
    /// the same bytes, exit status and message.
    @Suite struct LeanCLITests {
        static func fullCLI() throws -> String { try CLIHarness.sibling("sortedvault-cli") }

        /// Runs `arguments` through the lean binary and the full CLI and expects the same answer.
        static func expectAgreement(_ cli: CLIHarness, _ arguments: [String], input: Data = Data(),
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
            let lean = try cli.run(arguments, input: input)
            let full = try cli.run(arguments, input: input, executable: try fullCLI())
            #expect(lean.status == full.status, "\(arguments): exit \(lean.status) vs \(full.status)", sourceLocation: sourceLocation)
            // status names the daemon's uptime, which may tick between the two runs.
            func steady(_ output: Data) -> String {
                String(decoding: output, as: UTF8.self).replacing(#/, up [0-9dhms ]+/#, with: ", up …")
                    .replacing(#/"uptimeSeconds" : [0-9]+/#, with: #""uptimeSeconds" : …"#)
            }
            #expect(steady(lean.stdout) == steady(full.stdout), "\(arguments): standard output differs", sourceLocation: sourceLocation)
            #expect(lean.stderr == full.stderr, "\(arguments): \(lean.stderr) vs \(full.stderr)", sourceLocation: sourceLocation)
        }

        @Test func everyHotVerbAndItsErrorsAnswerAsTheFullCLIDoes() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "s", "a"], input: Data("v1".utf8), executable: try Self.fullCLI()).status == 0)
            let cases: [[String]] = [
                ["retrieve", "s", "a"], ["retrieve", "s", "missing"], ["retrieve", "--socket", cli.socket, "s", "a"],
                ["retrieve", "--socket=" + cli.socket, "s", "a", "--no-autostart"], ["retrieve", "--", "s", "a"],
                ["retrieve", "s"], ["retrieve", "s", "a", "b"], ["retrieve", "s", "a", "--bogus"], ["retrieve", "--help"],
                ["retrieve", "sortedvault/x", "a"], ["retrieve", "caf\u{E9}", "a"], ["retrieve", "cafe\u{301}", "a"], ["retrieve", "", "a"],
                ["retrieve", "s", "a", "--socket"], ["retrieve", "s", "a", "--no-autostart", "--no-autostart"],
                ["delete", "s", "missing"], ["delete", "s", "a", "--label", "x"],
                ["session", "autologin", "s", "a"], ["session", "autologin", "s"], ["session", "status", "s", "a"],
                ["store", "s", "a", "refused-secret"], ["store", "s", "b", "--attribute", "no-equals"],
                ["store", "s", "b", "--expires-in", "soon"], ["store", "s", String(repeating: "x", count: 513)],
                ["--help"], ["status"], ["status", "--json"], ["status", "extra"], ["status", "--socket", cli.socket], [],
            ]
            for arguments in cases { try Self.expectAgreement(cli, arguments) }
            cli.stopDaemon()
        }

        @Test func aStoreThroughTheLeanBinaryKeepsTheExactBytesAndEveryOption() async throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let secret = Data([0x00, 0xFF, 0x0A, 0x22, 0x5C]) + Data("tail".utf8)
            let stored = try cli.run(["store", "--label", "Build bot", "--attribute", "env=prod", "--attribute=team=a",
                                      "--attribute", "env=staging", "--expires-in", "3600", "--", "svc", "-dash"], input: secret)
            #expect(stored.status == 0, "\(stored.stderr)")
            #expect(stored.stdout.isEmpty && stored.stderr.isEmpty)
            let item = try await cli.client.retrieve(ItemKey(service: "svc", account: "-dash"))
            #expect(item.secret.withUnsafeBytes { Data($0) } == secret)
            #expect(item.metadata.label == "Build bot")
            #expect(item.metadata.attributes == ["env": "staging", "team": "a"])
            let expires = try #require(item.metadata.expiresAt).timeIntervalSinceNow
            #expect(expires > 3500 && expires <= 3600, "expires in \(expires) s")
            let retrieved = try cli.run(["retrieve", "--", "svc", "-dash"])
            #expect(retrieved.status == 0 && retrieved.stdout == secret)

            // Without `--`, ArgumentParser reads "-dash" as short flags (-h among them): the lean
            // front hands it over, and both print the help.
            try Self.expectAgreement(cli, ["delete", "svc", "-dash"])
            #expect(try cli.run(["delete", "--", "svc", "-dash"]).status == 0)
            try Self.expectAgreement(cli, ["retrieve", "--", "svc", "-dash"])
            try Self.expectAgreement(cli, ["delete", "--", "svc", "-dash"])
            cli.stopDaemon()
        }

        @Test func aSecretOverTheLimitIsRefusedWithTheSameMessageAndNothingIsStored() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let big = Data(repeating: 0x41, count: Limits.maximumSecretBytes + 1)
            try Self.expectAgreement(cli, ["store", "s", "big"], input: big)
            #expect(try cli.run(["retrieve", "s", "big"]).status == 1)
            let exact = Data(repeating: 0x42, count: Limits.maximumSecretBytes)
            #expect(try cli.run(["store", "s", "max"], input: exact).status == 0)
            #expect(try cli.run(["retrieve", "s", "max"]).stdout == exact)
            cli.stopDaemon()
        }

        @Test func aLockedVaultAndADeniedClientReadTheSameThroughBothBinaries() throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("pw")
            let policy = cli.root + "/policy"
            try FileManager.default.createDirectory(atPath: policy, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = FileManager.default.createFile(atPath: policy + "/access.toml", contents: Data("""
                [[rule]]
                name = "granted-only"
                effect = "allow"
                uids = ["@self"]
                operations = ["retrieve", "store", "delete", "session.autologin"]
                services = ["granted.*"]

                """.utf8), attributes: [.posixPermissions: 0o600])
            try cli.startDaemon(extraArguments: ["--policy-dir", policy])
            for arguments in [["status"], ["retrieve", "granted.a", "x"], ["delete", "granted.a", "x"], ["session", "autologin", "granted.a", "x"],
                              ["retrieve", "other", "x"], ["delete", "other", "x"], ["session", "autologin", "other", "x"]] {
                try Self.expectAgreement(cli, arguments)
            }
            let locked = try cli.run(["store", "granted.a", "x"], input: Data("v".utf8))
            #expect(locked.status == 2 && locked.stderr.contains("locked"), "\(locked.status) \(locked.stderr)")
            let denied = try cli.run(["store", "other", "x"], input: Data("v".utf8))
            #expect(denied.status == 3, "\(denied.status) \(denied.stderr)")
            #expect(denied.stderr == (try cli.run(["store", "other", "x"], input: Data("v".utf8), executable: try Self.fullCLI())).stderr)
            cli.stopDaemon()
        }

        @Test func aDaemonThatIsNotRunningIsStartedOnDemandAndWithoutAVaultTheFullCLISaysSo() throws {
            let cli = try CLIHarness()
            defer { cli.killStrayDaemons() }
            // No vault yet: the front hands over, the full CLI names the missing vault.
            try Self.expectAgreement(cli, ["retrieve", "s", "a"])
            try Self.expectAgreement(cli, ["store", "s", "a"], input: Data("x".utf8))
            #expect(!cli.socketAnswers())
            try cli.initKeyFileVault()
            try Self.expectAgreement(cli, ["retrieve", "s", "a", "--no-autostart"])
            #expect(!cli.socketAnswers())
            let stored = try cli.run(["store", "s", "a", "--data-dir", cli.dataDir], input: Data("started".utf8))
            #expect(stored.status == 0, "\(stored.stderr)")
            #expect(cli.socketAnswers())
            #expect(try cli.run(["retrieve", "s", "a"]).text == "started")
            #expect(try cli.run(["delete", "s", "a"]).status == 0)
        }

        /// The hot path is the lean binary alone: it answers with no `sortedvault-cli` beside it, and
        /// links neither Foundation, SwiftNIO nor ArgumentParser.
        @Test func theHotVerbsNeedNeitherTheFullCLINorFoundation() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "s", "a"], input: Data("alone".utf8)).status == 0)
            var template = Array((FileManager.default.temporaryDirectory.path + "/sv-lean-XXXXXX").utf8CString)
            let directory = String(cString: try #require(mkdtemp(&template)))
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try ReachableExecutable.copy(CLIHarness.executable, to: directory + "/sortedvault")
            let alone = directory + "/sortedvault"
            #expect(try cli.run(["retrieve", "s", "a"], executable: alone).text == "alone")
            #expect(try cli.run(["session", "autologin", "s", "a"], executable: alone).status == 8)
            let help = try cli.run(["--help"], executable: alone)
            #expect(help.status == 4 && help.stderr.contains("install sortedvault-cli"), "\(help.stderr)")

            let binary = try Data(contentsOf: URL(fileURLWithPath: CLIHarness.executable))
            for module in ["FoundationEssentials", "10Foundation", "7NIOCore", "8NIOPosix", "14ArgumentParser"] {
                #expect(binary.range(of: Data(module.utf8)) == nil, "the lean binary links \(module)")
            }
            cli.stopDaemon()
        }
    }
}
