import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// `sortedvault import pass` against a real `pass` store with a throw-away gpg key: an entry
    /// written by `pass insert` and a docker login written by docker-credential-pass move in, and
    /// docker's helper, ours, then answers with the same secret the reference one did.
    @Suite struct PassImportTests {
        @Test func aPassStoreMovesInAndDockersHelperFindsItsLogins() throws {
            try CIRequirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/pass")
                                      && FileManager.default.isExecutableFile(atPath: "/usr/bin/docker-credential-pass"),
                                      "pass, gpg and docker-credential-pass (apt-get install -y pass gnupg golang-docker-credential-helpers)")
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            let store = try PassStore(root: cli.root)
            defer { store.stop() }
            let entry = "p@ss w0rd\nlogin: ada\nurl: https://mail.example.com\n"
            let inserted = try cli.runProgram(["/usr/bin/pass", "insert", "--multiline", "email/work/ada"], input: Data(entry.utf8), extra: store.environment)
            #expect(inserted.status == 0, "\(inserted.stderr)")
            let login = #"{"ServerURL":"https://registry.example.com","Username":"bob","Secret":"docker-secret-42"}"#
            let dockerStored = try cli.runProgram(["/usr/bin/docker-credential-pass", "store"], input: Data(login.utf8), extra: store.environment)
            #expect(dockerStored.status == 0, "\(dockerStored.text) \(dockerStored.stderr)")

            let imported = try cli.runProgram([CLIHarness.executable, "import", "pass"], extra: store.environment)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.text.contains("Read 2 entries") && imported.text.contains("Stored 2 items."), "\(imported.text)")
            #expect(!imported.text.contains("p@ss") && !imported.text.contains("docker-secret"), "the import printed a secret")
            // The whole entry, exactly as `pass show` prints it.
            #expect(try cli.run(["retrieve", "pass:email/work", "ada"]).text == entry)
            // docker's helper, ours, answers what docker-credential-pass answers.
            let ours = try CLIHarness.sibling("docker-credential-sortedvault")
            let mine = try cli.runProgram([ours, "get"], input: Data("https://registry.example.com\n".utf8))
            let theirs = try cli.runProgram(["/usr/bin/docker-credential-pass", "get"], input: Data("https://registry.example.com\n".utf8),
                                            extra: store.environment)
            #expect(mine.status == 0 && mine.stdout == theirs.stdout, "ours \(mine.text) \(mine.stderr); pass \(theirs.text)")
            // Again: nothing to do.
            let again = try cli.runProgram([CLIHarness.executable, "import", "pass"], extra: store.environment)
            #expect(again.status == 0 && again.text.contains("Stored 0 items."), "\(again.text) \(again.stderr)")
        }
    }
}
