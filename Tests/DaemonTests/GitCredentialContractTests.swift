import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// git's contract for credential helpers (its t0303-credential-external.sh) through real
    /// `git credential`: names the vault refuses, such as the empty user name, are kept too.
    @Suite struct GitCredentialContractTests {
        @Test func anEmptyUsernameIsStoredFilledAndErasedThroughGit() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let ours = try CLIHarness.sibling("git-credential-sortedvault")
            let git = GitCredentialHelperTests.git
            for (username, password) in [("", "pw-empty"), ("alice", "pw-alice")] {
                let approve = try git(cli, ["credential", "approve"], ours,
                                      "protocol=https\nhost=sso.example\nusername=\(username)\npassword=\(password)\n\n")
                #expect(approve.status == 0, "\(approve.stderr)")
            }
            // Stored under the reserved name for "" (docs/helpers.md), beside alice's item.
            #expect(try cli.run(["retrieve", "git:https://sso.example", "%sv:"]).text == "pw-empty")
            #expect(try cli.run(["retrieve", "git:https://sso.example", "alice"]).text == "pw-alice")

            let fill = try git(cli, ["credential", "fill"], ours, "protocol=https\nhost=sso.example\nusername=\n\n")
            #expect(fill.status == 0, "\(fill.stderr)")
            #expect(fill.text == "protocol=https\nhost=sso.example\nusername=\npassword=pw-empty\n")

            let reject = try git(cli, ["credential", "reject"], ours, "protocol=https\nhost=sso.example\nusername=\n\n")
            #expect(reject.status == 0, "\(reject.stderr)")
            #expect(try cli.run(["retrieve", "git:https://sso.example", "%sv:"]).status == 1)
            #expect(try cli.run(["retrieve", "git:https://sso.example", "alice"]).text == "pw-alice")
            cli.stopDaemon()
        }

        /// t0303's own case: an empty user name with an empty password, filled with no user name.
        @Test func anEmptyUsernameWithAnEmptyPasswordIsFilledWhenGitSendsNoUsername() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let ours = try CLIHarness.sibling("git-credential-sortedvault")
            let git = GitCredentialHelperTests.git
            let approve = try git(cli, ["credential", "approve"], ours, "protocol=https\nhost=sso.tld\nusername=\npassword=\n\n")
            #expect(approve.status == 0, "\(approve.stderr)")
            let fill = try git(cli, ["credential", "fill"], ours, "protocol=https\nhost=sso.tld\n\n")
            #expect(fill.status == 0, "\(fill.stderr)")
            #expect(fill.text == "protocol=https\nhost=sso.tld\nusername=\npassword=\n")
            cli.stopDaemon()
        }
    }
}
