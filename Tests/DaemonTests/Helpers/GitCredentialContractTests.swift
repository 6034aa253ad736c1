import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// git's contract for credential helpers (its t0303-credential-external.sh) through real
    /// `git credential`: names the vault refuses, such as the empty user name, are kept too.
    @Suite struct GitCredentialContractTests {
        /// git's own t0303-credential-external.sh, from the source of the git Debian installed (fetched
        /// by scripts/install-deps), run against that git with our helper: every test passes.
        @Test func gitsOwnTestForExternalHelpersPassesEveryTest() throws {
            let source = CLIHarness.repository + "/.cache/git-source"
            guard FileManager.default.fileExists(atPath: source + "/t/t0303-credential-external.sh") else {
                throw HarnessError("git's tests are not at \(source): run scripts/install-deps")
            }
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            // git finds the helper on PATH by its name, as installed.
            let helpers = (try CLIHarness.sibling("git-credential-sortedvault") as NSString).deletingLastPathComponent
            let run = try cli.runProgram(
                // umask 022: the scripts git's test library writes must be executable whatever umask this
                // process has at the moment (a server in another test narrows it while it binds).
                ["/bin/sh", "-c", #"umask 022 && cd "$1/t" && exec /bin/sh t0303-credential-external.sh -v --root="$2""#, "sh", source, cli.root + "/git-trash"],
                extra: ["GIT_TEST_INSTALLED": "/usr/bin", "GIT_TEST_CREDENTIAL_HELPER": "sortedvault",
                        "TEST_OUTPUT_DIRECTORY_OVERRIDE": cli.root, "PATH": helpers + ":/usr/bin:/bin"])
            let lines = run.text.split(separator: "\n")
            let passed = lines.filter { $0.hasPrefix("ok ") }.count
            #expect(run.status == 0, "\(run.text)\(run.stderr)")
            #expect(!lines.contains { $0.hasPrefix("not ok") }, "\(run.text)")
            #expect(passed >= 12 && lines.contains("# passed all \(passed) test(s)"), "\(run.text)")
            #expect(lines.contains { $0.hasPrefix("ok ") && $0.hasSuffix("can store empty username") }, "\(run.text)")
            cli.stopDaemon()
        }

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
