import Foundation
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Without systemd there was no way to stop the daemon or to make it read a changed
    /// policy, and `status` did not say which daemon answered. `sortedvault stop`, `sortedvault
    /// reload` (and SIGHUP), and `status` with the daemon's pid, uptime and policy files.
    @Suite struct DaemonControlTests {
        static let denyDelete = """

            [[rule]]
            name = "keep-svc"
            effect = "deny"
            uids = ["@self"]
            operations = ["delete"]
            services = ["svc"]

            """

        @Test func statusNamesTheDaemonAndReloadAndStopWorkWithoutSystemd() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.writePolicy(settings: "")
            try cli.startDaemon()
            let daemonPID = try #require(cli.daemon).pid
            let access = cli.configDir + "/policy/access.toml"
            let shipped = try String(contentsOfFile: access, encoding: .utf8)

            let status = try cli.run(["status"])
            #expect(status.status == 0)
            #expect(status.text.contains(", pid \(daemonPID), up "), "\(status.text)")
            #expect(status.text.contains("policy: \(access)\n"), "\(status.text)")
            #expect(try cli.run(["store", "svc", "ada"], input: Data("x".utf8)).status == 0)

            // A connection opened before the reload stays open across it.
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            _ = try connection.call("org.sortedvault.vault.Status")
            try (shipped + Self.denyDelete).write(toFile: access, atomically: false, encoding: .utf8)
            let reloaded = try cli.run(["reload"])
            #expect(reloaded.status == 0 && reloaded.text.contains("reloaded the policy: \(access)"), "\(reloaded.status) \(reloaded.stderr)")
            #expect(try cli.run(["delete", "svc", "ada"]).status == 3)
            _ = try connection.call("org.sortedvault.vault.Status")

            // A policy that does not parse: the one in force stays, and reload and status say why.
            try (shipped + "[[rule]]\nname = \"broken\"\neffect = \"maybe\"\n").write(toFile: access, atomically: false, encoding: .utf8)
            let refused = try cli.run(["reload"])
            #expect(refused.status == 7 && refused.stderr.contains("the policy was not reloaded, the one in force stays")
                    && refused.stderr.contains("access.toml"), "\(refused.status) \(refused.stderr)")
            #expect(try cli.run(["status"]).text.contains("policy reload failed, the policy above stays: "))
            #expect(try cli.run(["delete", "svc", "ada"]).status == 3, "the old policy (with its deny) must stay in force")
            #expect(try cli.run(["retrieve", "svc", "ada"]).text == "x")

            // SIGHUP does what reload does.
            try shipped.write(toFile: access, atomically: false, encoding: .utf8)
            kill(daemonPID, SIGHUP)
            #expect(CLIHarness.eventually(within: 600) { (try? cli.run(["status"]).text.contains("policy reload failed")) == false })
            #expect(try cli.run(["delete", "svc", "ada"]).status == 0)

            let stopped = try cli.run(["stop"])
            #expect(stopped.status == 0 && stopped.text.contains("stopped the daemon (pid \(daemonPID))"), "\(stopped.status) \(stopped.stderr)")
            #expect(!cli.socketAnswers())
            #expect(cli.stopDaemon() == 0, "the daemon did not end cleanly: \(cli.daemonOutput())")
            let again = try cli.run(["stop"])
            #expect(again.status == 0 && again.text.contains("nothing to stop"), "\(again.stderr)")
        }
    }
}
