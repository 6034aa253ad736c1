import Foundation
import TestSupport
import Testing
import Varlink

extension DaemonSuite {
    /// `Exists` (org.sortedvault.vault) and `sortedvault exists`: the answer without the secret, and
    /// the policy's "list" for the service deciding who may ask.
    @Suite struct ExistsTests {
        @Test func theCLIAnswersByItsExitStatusAndPrintsNothing() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            #expect(try cli.run(["store", "com.sorted.api", "ada"], input: Data("s3cret-value".utf8)).status == 0)
            let present = try cli.run(["exists", "com.sorted.api", "ada"])
            #expect(present.status == 0 && present.stdout.isEmpty && present.stderr.isEmpty, "\(present.status) \(present.stderr)")
            let absent = try cli.run(["exists", "com.sorted.api", "bob"])
            #expect(absent.status == 1 && absent.stdout.isEmpty && absent.stderr.isEmpty, "\(absent.status) \(absent.stderr)")
            #expect(try cli.run(["delete", "com.sorted.api", "ada"]).status == 0)
            #expect(try cli.run(["exists", "com.sorted.api", "ada"]).status == 1)
            // Bad input is usage, as for every item verb.
            #expect(try cli.run(["exists", "", "ada"]).status == 64)
        }

        @Test func theReplyHoldsOnlyTheAnswerAndTheListRuleDecides() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            let testProcess = SessionNameConfusionTests.testExecutable
            try cli.writePolicy(access: PolicyText.ownerCLIAnd(testProcess, operations: ["list"], services: ["com.a.*"]), settings: "")
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            #expect(try cli.run(["store", "com.a.api", "ada"], input: Data("s3cret-value".utf8)).status == 0)
            #expect(try cli.run(["store", "com.b.api", "ada"], input: Data("s3cret-value".utf8)).status == 0)
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            func exists(_ service: String, _ account: String) throws -> [String: JSONValue] {
                try connection.call("org.sortedvault.vault.Exists", ["service": .string(service), "account": .string(account)])
            }
            #expect(try exists("com.a.api", "ada") == ["exists": .bool(true)])
            #expect(try exists("com.a.api", "bob") == ["exists": .bool(false)])
            // No list rule for com.b.*: the program may not learn whether its items exist.
            do {
                _ = try exists("com.b.api", "ada")
                Issue.record("Exists answered for a service the program may not list")
            } catch let error as VarlinkError {
                #expect(error.name == "org.sortedvault.vault.PermissionDenied", "\(error.name)")
            }
        }
    }
}
