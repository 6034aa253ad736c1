import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// The access log lay on disk with every service name in plaintext, while the vault
    /// seals them. Now a name is a keyed pseudonym at rest, `sortedvault log` shows the names through
    /// the unlocked daemon, and `access_log_names = "plain"` keeps plain names for who wants them.
    @Suite struct LogNamesTests {
        /// The access log once `mark` stands in it `count` times: the daemon writes the log off the
        /// request path, within 100 ms of a call, so a reply can arrive before its line.
        static func logFile(_ cli: CLIHarness, _ mark: String, count: Int = 1) -> String {
            var text = ""
            _ = CLIHarness.eventually {
                text = (try? String(contentsOfFile: cli.accessLogPath, encoding: .utf8)) ?? ""
                return text.components(separatedBy: mark).count - 1 >= count
            }
            return text
        }

        static func pseudonyms(_ text: String) -> [String] {
            text.matches(of: #/service=<(private:[0-9a-f]{16})>/#).map { String($0.output.1) }
        }

        @Test func namesArePseudonymsAtRestAndTheUnlockedDaemonNamesThem() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initPassphraseVault("pw")
            try cli.writePolicy(settings: "")
            try cli.startDaemon()
            // Before the first unlock there is no key: the name is withheld.
            #expect(try cli.run(["retrieve", "com.secret.bank", "ada"]).status == 2)
            let first = Self.logFile(cli, "operation=\"retrieve\"")
            #expect(first.contains("operation=\"retrieve\" service=<private> "), "\(first)")
            #expect(try cli.run(["unlock"], input: Data("pw\n".utf8)).status == 0)
            #expect(try cli.run(["store", "com.secret.bank", "ada"], input: Data("x".utf8)).status == 0)
            #expect(try cli.run(["retrieve", "com.secret.bank", "ada"]).status == 0)

            let file = Self.logFile(cli, "operation=\"retrieve\"", count: 2)
            #expect(!file.contains("com.secret.bank"), "a service name is on disk in plaintext: \(file)")
            let pseudonym = try #require(Set(Self.pseudonyms(file)).first)
            #expect(Set(Self.pseudonyms(file)) == [pseudonym], "one name, one pseudonym: \(file)")
            let shown = try cli.run(["log", "-n", "50"])
            #expect(shown.text.contains("operation=\"store\" service=\"com.secret.bank\""), "\(shown.text)")
            #expect(shown.stderr.isEmpty, "\(shown.stderr)")

            // Locked again: the log keeps writing pseudonyms, and `log` says why it shows them.
            #expect(try cli.run(["lock"]).status == 0)
            #expect(try cli.run(["retrieve", "com.secret.bank", "ada"]).status == 2)
            #expect(Self.pseudonyms(Self.logFile(cli, "operation=\"retrieve\"", count: 3)).last == pseudonym)
            let locked = try cli.run(["log", "-n", "5"])
            #expect(locked.status == 0 && locked.text.contains("service=<\(pseudonym)>") && locked.stderr.contains("the vault is locked"), "\(locked.stderr)")

            // The key comes from the vault's master key: the same name, the same pseudonym after a restart.
            cli.stopDaemon()
            try cli.startDaemon()
            #expect(try cli.run(["unlock"], input: Data("pw\n".utf8)).status == 0)
            #expect(try cli.run(["retrieve", "com.secret.bank", "ada"]).status == 0)
            #expect(Self.pseudonyms(Self.logFile(cli, "operation=\"retrieve\"", count: 4)).last == pseudonym)
            // The daemon's own log (the journal under systemd) names services the same way.
            #expect(try !cli.daemonLogged("com.secret.bank"))
            cli.stopDaemon()
        }

        @Test func plainNamesAreASetting() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.writePolicy(settings: "access_log_names = \"plain\"\n")
            try cli.startDaemon()
            #expect(try cli.run(["store", "com.example.api", "ada"], input: Data("x".utf8)).status == 0)
            let file = Self.logFile(cli, "operation=\"store\"")
            #expect(file.contains("operation=\"store\" service=\"com.example.api\""), "\(file)")
            cli.stopDaemon()
        }

        /// LogNames answers only the names the caller may list.
        @Test func aProgramResolvesOnlyTheNamesItMayList() async throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            let testProcess = SessionNameConfusionTests.testExecutable
            try cli.writePolicy(access: PolicyText.ownerCLIAnd(testProcess, operations: ["list"], services: ["com.a.*"]), settings: "")
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            for service in ["com.a.api", "com.b.api"] {
                #expect(try cli.run(["store", service, "ada"], input: Data("x".utf8)).status == 0)
            }
            let names = try await cli.client.logNames()
            #expect(Set(names.values) == ["com.a.api"], "\(names)")
            let file = Self.logFile(cli, "operation=\"store\"", count: 2)
            #expect(Set(Self.pseudonyms(file)).isSuperset(of: names.keys))
        }
    }
}
