import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// A rule with `services` scopes what it says to those services, also for the calls that name no
    /// service, and never turns a peer away at connect for services it does not ask for.
    @Suite struct PolicyScopeDaemonTests {
        @Test func anAppAllowedSomeServicesCannotLockTheVaultAndADenyForOthersTurnsNobodyAway() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            // The app: its own copies of both CLI programs, in a directory of their own.
            let app = try ReachableExecutable(copying: CLIHarness.executable)
            let appDirectory = (app.path as NSString).deletingLastPathComponent
            let buildDirectory = (CLIHarness.executable as NSString).deletingLastPathComponent
            try cli.writePolicy(access: """
                [[rule]]
                name = "owner-cli"
                effect = "allow"
                uids = ["@self"]
                executables = ["\(buildDirectory)/sortedvault*"]
                operations = ["*"]
                services = ["*"]

                [[rule]]
                name = "app-a"
                effect = "allow"
                uids = ["@self"]
                executables = ["\(appDirectory)/sortedvault*"]
                operations = ["*"]
                services = ["com.a.*"]

                [[rule]]
                name = "no-bank"
                effect = "deny"
                uids = ["@self"]
                operations = ["*"]
                services = ["com.bank*"]

                """, settings: "")
            try cli.startDaemon()
            // The owner is admitted and served, the deny rule for com.bank* notwithstanding.
            let status = try cli.run(["status"])
            #expect(status.status == 0, "the owner's status: \(status.status) \(status.stderr)")
            #expect(try cli.run(["store", "com.example.api", "ada"], input: Data("t".utf8)).status == 0)
            #expect(try cli.run(["store", "com.bank.api", "ada"], input: Data("t".utf8)).status == 3)

            // The app may use its services, and nothing that acts on the whole vault.
            #expect(try cli.run(["store", "com.a.api", "ada"], input: Data("a".utf8), executable: app.path).status == 0)
            #expect(try cli.run(["retrieve", "com.a.api", "ada"], executable: app.path).text == "a")
            let lock = try cli.run(["lock"], executable: app.path)
            #expect(lock.status == 3, "the app's lock: \(lock.status) \(lock.stderr)")
            #expect(try cli.run(["status"], executable: app.path).status == 3)
            let listed = try cli.run(["list"], executable: app.path)
            #expect(listed.status == 0 && listed.text.contains("com.a.api") && !listed.text.contains("com.example.api"), "\(listed.text)")
            // The vault is still open for the owner.
            #expect(try cli.run(["retrieve", "com.example.api", "ada"]).text == "t")
            cli.stopDaemon()
        }
    }
}
