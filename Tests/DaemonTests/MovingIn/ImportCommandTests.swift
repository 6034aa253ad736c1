import Foundation
import TestSupport
import Testing
import VaultCore

extension DaemonSuite {
    /// `sortedvault import` with the real tools: git's own store helper writes `~/.git-credentials`,
    /// the import moves it into the daemon, and git, through git-credential-sortedvault, fills the
    /// same secret with the plaintext gone.
    @Suite struct ImportCommandTests {
        static let secret = "ghp_MovingIn+Secret/42"

        /// A vault and daemon, and a `~/.git-credentials` that git's store helper wrote, with a
        /// comment line of the user's own that must survive.
        func world() throws -> (CLIHarness, String) {
            try CIRequirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "git, whose own store helper writes the file (apt-get install -y git)")
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let file = cli.root + "/home/.git-credentials"
            let store = try GitCredentialHelperTests.git(cli, ["credential-store", "--file", file, "store"], helper: "",
                                                         input: "protocol=https\nhost=git.example.com\nusername=alice\npassword=\(Self.secret)\n\n")
            #expect(store.status == 0, "\(store.stderr)")
            let other = try GitCredentialHelperTests.git(cli, ["credential-store", "--file", file, "store"], helper: "",
                                                         input: "protocol=https\nhost=code.example.org\nusername=bob\npassword=other-secret\n\n")
            #expect(other.status == 0, "\(other.stderr)")
            return (cli, file)
        }

        @Test func theScanReportsWhatItFoundAndChangesNothing() throws {
            let (cli, file) = try world()
            defer { cli.stopDaemon() }
            let before = try Data(contentsOf: URL(fileURLWithPath: file))
            let scan = try cli.run(["import", "--scan"])
            #expect(scan.status == 0, "\(scan.stderr)")
            #expect(scan.text.contains("\(file): git-credentials, https://git.example.com, user alice — would be stored as"), "\(scan.text)")
            #expect(scan.text.contains("https://code.example.org, user bob"), "\(scan.text)")
            #expect(!scan.text.contains(Self.secret) && !scan.stderr.contains(Self.secret), "the scan printed the secret")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before, "the scan changed the file")
            #expect(try cli.run(["exists", "git:https://git.example.com", "alice"]).status == 1, "the scan stored something")
        }

        @Test func anImportWithRemoveSourceLeavesGitWorkingAndNoPlaintext() throws {
            let (cli, file) = try world()
            defer { cli.stopDaemon() }
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            let imported = try cli.run(["import", "git-credentials", "--remove-source"])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.text.contains("Stored 2 items."), "\(imported.text)")
            // git, through our helper, fills the secret that was in the file.
            let ours = try CLIHarness.sibling("git-credential-sortedvault")
            let fill = try GitCredentialHelperTests.git(cli, ["credential", "fill"], helper: ours,
                                                        input: "protocol=https\nhost=git.example.com\nusername=alice\n\n")
            #expect(fill.status == 0, "\(fill.stderr)")
            #expect(fill.text.contains("password=\(Self.secret)\n"), "git did not get the imported secret")
            // The file holds no secret any more, and keeps its mode.
            let after = try String(contentsOfFile: file, encoding: .utf8)
            #expect(!after.contains("ghp_") && !after.contains("other-secret"), "the source still holds a secret: \(after)")
            #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == mode)
            // The import is an owner line of the access log, naming the file, never an item.
            let log = try String(contentsOfFile: cli.accessLogPath, encoding: .utf8)
            #expect(log.contains(" owner uid=\(getuid()) ") && log.contains("operation=\"import\" note=\"imported git-credentials from "), "\(log)")
            #expect(log.contains("items 2 stored, 0 kept") && log.contains("rewrote \(file)") && !log.contains("git.example.com"), "\(log)")
            // Again: nothing to do, nothing changes.
            let again = try cli.run(["import", "git-credentials"])
            #expect(again.status == 0 && again.text.contains("Stored 0 items."), "\(again.text) \(again.stderr)")
        }

        /// An item already in the vault with another secret is kept, said so, and its line stays in the file.
        @Test func aConflictIsKeptNamedAndItsSourceLineStays() throws {
            let (cli, file) = try world()
            defer { cli.stopDaemon() }
            let stored = try cli.run(["store", "git:https://git.example.com", "alice"], input: Data("newer-secret".utf8))
            #expect(stored.status == 0, "\(stored.stderr)")
            let imported = try cli.run(["import", "git-credentials", "--remove-source", "--keep-backup"])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.text.contains("Kept 1 item"), "\(imported.text)")
            #expect(try cli.run(["retrieve", "git:https://git.example.com", "alice"]).text == "newer-secret")
            let after = try String(contentsOfFile: file, encoding: .utf8)
            #expect(after.contains("alice:") && after.contains("@git.example.com"), "the kept credential's line was removed")
            #expect(!after.contains("other-secret"))
            #expect(FileManager.default.fileExists(atPath: file + ".sortedvault-backup"))
        }

        /// `--configure` points git's own configuration at our helper, saying what it was: git then
        /// fills the imported secret with no helper named on its command line.
        @Test func configureSwitchesGitsCredentialHelperAndSaysWhatItWas() throws {
            let (cli, file) = try world()
            defer { cli.stopDaemon() }
            let git = ["/usr/bin/git"]
            let bin = (try CLIHarness.sibling("git-credential-sortedvault") as NSString).deletingLastPathComponent
            let environment = ["GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "PATH": bin + ":/usr/bin:/bin"]
            #expect(try cli.runProgram(git + ["config", "--global", "credential.helper", "store --file \(file)"], extra: environment).status == 0)
            let imported = try cli.runProgram([CLIHarness.executable, "import", "git-credentials", "--remove-source", "--configure"], extra: environment)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.text.contains("git's credential.helper (global) was \"store --file \(file)\"; now \"sortedvault\"."), "\(imported.text)")
            #expect(try cli.runProgram(git + ["config", "--global", "--get-all", "credential.helper"], extra: environment).text == "sortedvault\n")
            let fill = try cli.runProgram(git + ["credential", "fill"], input: Data("protocol=https\nhost=git.example.com\nusername=alice\n\n".utf8),
                                          extra: environment)
            #expect(fill.status == 0 && fill.text.contains("password=\(Self.secret)\n"), "\(fill.stderr)")
        }

        /// `--configure` with docker's file sets `credsStore` in the same rewrite that removes the
        /// secrets; docker's helper then answers for the registry.
        @Test func configureSetsDockersCredsStoreInTheSameRewrite() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            let directory = cli.root + "/home/.docker"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let auth = Data("carol:docker-secret-7".utf8).base64EncodedString()
            let config = "{\n\t\"auths\": {\n\t\t\"registry.example.com\": {\n\t\t\t\"auth\": \"\(auth)\"\n\t\t}\n\t},\n\t\"credsStore\": \"desktop\"\n}"
            try config.write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
            let imported = try cli.run(["import", "docker-config", "--remove-source", "--configure"])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.text.contains("docker's credsStore in \(directory)/config.json was \"desktop\"; now \"sortedvault\"."), "\(imported.text)")
            let after = try String(contentsOfFile: directory + "/config.json", encoding: .utf8)
            #expect(after.contains("\"credsStore\": \"sortedvault\"") && !after.contains(auth) && after.contains("registry.example.com"), "\(after)")
            let ours = try CLIHarness.sibling("docker-credential-sortedvault")
            let get = try cli.runProgram([ours, "get"], input: Data("registry.example.com\n".utf8))
            #expect(get.status == 0 && get.text.contains("\"Secret\":\"docker-secret-7\"") && get.text.contains("\"Username\":\"carol\""), "\(get.text)")
        }

        /// twine's `.pypirc` moves in where Python keyring, through our backend, asks for it: the
        /// real keyring library returns the token once the file holds it no more.
        @Test func aPypircTokenMovesInWherePythonKeyringFindsIt() throws {
            let (cli, python) = try PythonKeyringTests.liveDaemonAndBackend()
            defer { cli.stopDaemon() }
            let token = "pypi-AgEIcHlwaS5vcmc\(UUID().uuidString.prefix(8))"
            let file = cli.root + "/home/.pypirc"
            try "[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = \(token)\n".write(toFile: file, atomically: true, encoding: .utf8)
            let imported = try cli.run(["import", "pypirc", "--remove-source"])
            #expect(imported.status == 0 && imported.text.contains("Stored 1 item."), "\(imported.text) \(imported.stderr)")
            #expect(!(try String(contentsOfFile: file, encoding: .utf8)).contains(token))
            let result = try python.run(["-c", "import keyring; print(keyring.get_password('https://upload.pypi.org/legacy/', '__token__'))"])
            #expect(result.status == 0 && result.stdout == token + "\n", "\(result.stdout) \(result.stderr)")
        }
    }
}
