import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Executable rules are judged on the file the peer runs at each call, not only at accept.
    @Suite struct PeerExecutableTests {
        /// The owner may do everything, but no program at a path that never exists may ask for
        /// `status`: every `status` call could be decided by a rule with executables.
        static let statusNamesExecutables = """
            [[rule]]
            name = "owner"
            effect = "allow"
            uids = ["@self"]
            operations = ["*"]
            services = ["*"]

            [[rule]]
            name = "not-this-program"
            effect = "deny"
            executables = ["/nonexistent/program"]
            operations = ["status"]
            services = ["*"]

            """

        @Test func aConnectionKeptAcrossAnExecOfAnotherProgramIsRefusedOnItsNextCall() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.writePolicy(access: Self.statusNamesExecutables, settings: "")
            try cli.startDaemon()
            let other = try PeerScript.interpreterCopy(cli, name: "other-program")
            let lines = try PeerScript.run(cli, ["exec", cli.socket, other])
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.first?.contains(#""locked""#) == true, "before the exec: \(lines)")
            #expect(lines.last?.contains("org.sortedvault.varlink.ExecutableChanged") == true, "after the exec: \(lines)")
            try expectStillServed(cli)
        }

        /// With no rule naming executables (the shipped policy) the executable cannot change the
        /// answer: the call after an exec is answered.
        @Test func withoutAnExecutableRuleACallAfterAnExecIsAnswered() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let other = try PeerScript.interpreterCopy(cli, name: "other-program")
            let lines = try PeerScript.run(cli, ["exec", cli.socket, other])
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.allSatisfy { $0.contains(#""locked""#) }, "\(lines)")
        }

        @Test func aProcessWhoseExecutableWasDeletedIsRefusedOnItsNextCallAndWhenItReconnects() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.writePolicy(access: Self.statusNamesExecutables, settings: "")
            try cli.startDaemon()
            let doomed = try PeerScript.interpreterCopy(cli, name: "doomed-program")
            let lines = try PeerScript.run(cli, interpreter: doomed, ["delete-self", cli.socket])
            #expect(lines.count == 3, "\(lines)")
            #expect(lines.first?.contains(#""locked""#) == true, "before the deletion: \(lines)")
            #expect(lines.dropFirst().allSatisfy { $0.contains("org.sortedvault.varlink.ExecutableChanged") }, "after the deletion: \(lines)")
            #expect(!FileManager.default.fileExists(atPath: doomed))
            try expectStillServed(cli)
        }

        private func expectStillServed(_ cli: CLIHarness) throws {
            let status = try cli.run(["status", "--no-autostart"])
            #expect(status.status == 0, "\(status.stderr)")
        }
    }
}
