import Foundation
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Who may talk to the daemon: decided by the kernel-reported peer and the policy, never by the socket mode.
    @Suite struct AccessTests {
        @Test func anotherUIDIsRefusedEvenWhenTheSocketIsWorldWritable() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "s", "a"], input: Data("mine".utf8)).status == 0)
            // Open the path all the way to the socket for everyone.
            for path in [cli.root, cli.runtimeDir, cli.runtimeDir + "/sortedvault"] { chmod(path, 0o755) }
            chmod(cli.socket, 0o666)

            // nobody runs its own copy: the build folder may be inside a private (0700) directory.
            let shared = try ReachableExecutable(copying: CLIHarness.executable)
            let asNobody = try cli.run(["retrieve", "s", "a", "--socket", cli.socket, "--no-autostart"],
                                       prefix: ["/usr/sbin/runuser", "-u", "nobody", "--"], executable: shared.path)
            #expect(asNobody.status == 3, "nobody got exit \(asNobody.status): \(asNobody.stderr)")
            #expect(asNobody.stdout.isEmpty)
            // The client refuses a server of another uid as soon as it connects, so the daemon may
            // accept and refuse that connection after the client has exited: wait for its line.
            #expect(CLIHarness.eventually { cli.daemonOutput().contains("connection refused") }, "\(cli.daemonOutput())")
            #expect(cli.daemonOutput().contains("uid=65534") || cli.daemonOutput().contains("uid: 65534") || cli.daemonOutput().contains("65534"))
            // The owner is still served.
            #expect(try cli.run(["retrieve", "s", "a"]).text == "mine")
            cli.stopDaemon()
        }

        @Test func aClientThePolicyDoesNotGrantIsDeniedOnEveryMethod() throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("pw")
            let policy = try writePolicy(cli, """
                [[rule]]
                name = "only-retrieve-granted"
                effect = "allow"
                uids = ["@self"]
                operations = ["retrieve"]
                services = ["granted.*"]
                """)
            try cli.startDaemon(extraArguments: ["--policy-dir", policy])
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            let calls: [(String, [String: JSONValue])] = [
                ("Store", ["service": "other", "account": "a", "secret": "eA=="]),
                ("Retrieve", ["service": "other", "account": "a"]),
                ("Delete", ["service": "other", "account": "a"]),
                ("List", [:]),
                ("List", ["service": "other"]),
                ("Status", [:]),
                ("Unlock", ["passphrase": "pw"]),
                ("Lock", [:]),
                ("ChangePassphrase", ["old": "pw", "new": "pw2"]),
            ]
            for (method, parameters) in calls {
                do {
                    _ = try connection.call("org.sortedvault.vault." + method, parameters)
                    Issue.record("\(method) was allowed")
                } catch let error as VarlinkError {
                    #expect(error.name == "org.sortedvault.vault.PermissionDenied", "\(method) answered \(error.name)")
                }
            }
            // The one granted operation gets past the policy (and meets the lock).
            let granted = #expect(throws: VarlinkError.self) {
                _ = try connection.call("org.sortedvault.vault.Retrieve", ["service": "granted.api", "account": "a"])
            }
            #expect(granted?.name == "org.sortedvault.vault.Locked", "the granted Retrieve answered \(String(describing: granted?.name))")
            #expect(cli.daemonOutput().contains("access denied"))
            #expect(cli.daemonOutput().contains("only-retrieve-granted") || cli.daemonOutput().contains("default deny"))
            cli.stopDaemon()
        }

        @Test func aPeerNoRuleAdmitsIsDisconnectedOnEveryMethod() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let policy = try writePolicy(cli, """
                [[rule]]
                name = "someone-else"
                effect = "allow"
                uids = [4242]
                operations = ["*"]
                services = ["*"]
                """)
            try cli.startDaemon(extraArguments: ["--policy-dir", policy])
            for method in ["org.varlink.service.GetInfo", "org.sortedvault.vault.Status", "org.sortedvault.vault.List"] {
                let connection = try VarlinkConnection(unixSocketPath: cli.socket)
                #expect(throws: (any Error).self, "\(method) was answered") { _ = try connection.call(method, [:]) }
                connection.close()
            }
            let result = try cli.run(["status", "--no-autostart"])
            #expect(result.status == 3)
            cli.stopDaemon()
        }

        @Test func aMalformedPolicyStopsTheDaemonWithFileAndLine() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let policy = try writePolicy(cli, """
                [[rule]]
                name = "typo"
                effect = "allow"
                servces = ["*"]
                operations = ["*"]
                """)
            let result = try cli.run(["daemon", "--policy-dir", policy])
            #expect(result.status != 0)
            #expect(result.stderr.contains("access.toml:4"), "error was: \(result.stderr)")
            #expect(!cli.socketAnswers())
        }

        @Test func aWorldWritableOrSymlinkedPolicyStopsTheDaemon() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let policy = try writePolicy(cli, CLIHarness.defaultPolicy)
            chmod(policy + "/access.toml", 0o666)
            let writable = try cli.run(["daemon", "--policy-dir", policy])
            #expect(writable.status != 0)
            #expect(writable.stderr.contains("access.toml"))

            chmod(policy + "/access.toml", 0o600)
            try FileManager.default.moveItem(atPath: policy + "/access.toml", toPath: cli.root + "/real.toml")
            try FileManager.default.createSymbolicLink(atPath: policy + "/access.toml", withDestinationPath: cli.root + "/real.toml")
            let linked = try cli.run(["daemon", "--policy-dir", policy])
            #expect(linked.status != 0)
            #expect(linked.stderr.contains("access.toml"))
        }

        private func writePolicy(_ cli: CLIHarness, _ text: String) throws -> String {
            let directory = cli.root + "/policy"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = FileManager.default.createFile(atPath: directory + "/access.toml", contents: Data((text + "\n").utf8), attributes: [.posixPermissions: 0o600])
            return directory
        }
    }
}

extension CLIHarness {
    static let defaultPolicy = (try? String(contentsOfFile: repository + "/policy/access.toml", encoding: .utf8)) ?? ""
}
