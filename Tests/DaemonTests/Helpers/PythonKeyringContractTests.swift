import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// Our backend keeps keyring's contract: keyring's own backend test suite (from the pinned PyPI
    /// keyring) passes against a live daemon, names the vault refuses included.
    @Suite struct PythonKeyringContractTests {
        @Test func keyringsOwnBackendTestSuitePassesAgainstALiveDaemon() throws {
            let (cli, python) = try PythonKeyringTests.liveDaemonAndBackend()
            let suite = cli.root + "/test_sortedvault_backend.py"
            try """
                import keyring.testing.backend
                from sortedvault_keyring.backend import SortedVaultKeyring


                class TestSortedVaultKeyring(keyring.testing.backend.BackendBasicTests):
                    def init_keyring(self):
                        return SortedVaultKeyring()
                """.write(toFile: suite, atomically: true, encoding: .utf8)
            // An empty ini of our own: no configuration from the directories above is picked up.
            try "[pytest]\n".write(toFile: cli.root + "/pytest.ini", atomically: true, encoding: .utf8)
            let result = try python.run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", cli.root + "/pytest.ini", suite])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            // Every test of the suite ran and passed: the summary names nothing but passes.
            let summary = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
            let counts = summary.split(separator: " ").filter { Int($0) != nil }
            #expect(summary.contains(" passed in ") && counts.count == 1, "\(result.stdout)")
            #expect((counts.first.flatMap { Int($0) } ?? 0) >= 15, "\(result.stdout)")
            cli.stopDaemon()
        }

        /// The backend's names.py against the vectors the git helper's VaultNameEncoding is held to.
        @Test func theBackendEncodesNamesAsTheSharedVectorsSay() throws {
            let cli = try CLIHarness()
            var python = try PythonRunner(environment: cli.environment, scratch: cli.root)
            python.environment["PYTHONPATH"] = CLIHarness.repository + "/clients/python"
            let result = try python.run(["-c", """
                import json, sys
                from sortedvault_keyring import names
                vectors = json.load(open(sys.argv[1]))["vectors"]
                for vector in vectors:
                    if names.encode(vector["name"]) != vector["stored"] or names.decode(vector["stored"]) != vector["name"]:
                        print("mismatch:", ascii(vector))
                print(len(vectors), "vectors")
                """, CLIHarness.repository + "/Tests/Support/vault-name-encoding.json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasSuffix(" vectors\n") && !result.stdout.contains("mismatch"), "\(result.stdout)")
            #expect((Int(result.stdout.split(separator: " ").first ?? "") ?? 0) >= 10, "\(result.stdout)")
        }

        /// A secret keyring cannot return as text is refused, and no exception in the chain holds its bytes.
        @Test func aSecretThatIsNotUTF8IsRefusedWithoutItsBytesInTheException() throws {
            let (cli, python) = try PythonKeyringTests.liveDaemonAndBackend()
            #expect(try cli.run(["store", "bin.example", "ada"], input: Data([0xFF, 0xFE]) + Data("secret-tail".utf8)).status == 0)
            let result = try python.run(["-c", """
                import keyring, keyring.errors
                try:
                    keyring.get_password("bin.example", "ada")
                except keyring.errors.KeyringError as error:
                    print(type(error).__name__, error.__context__ is None, error.__cause__ is None, "secret-tail" in repr(error.args))
                """])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "KeyringError True True False\n", "\(result.stdout)")
            cli.stopDaemon()
        }

        /// docs/helpers.md's encoding, seen from the vault: accepted names as they are, the rest encoded.
        @Test func namesTheVaultRefusesAreStoredEncodedAndReadBack() throws {
            let (cli, python) = try PythonKeyringTests.liveDaemonAndBackend()
            let result = try python.run(["-c", """
                import keyring
                keyring.set_password("pypi.org", "ada", "plain")
                keyring.set_password("tab\\there", "", "encoded")
                keyring.set_password("%sv:looks-encoded", "line\\nbreak", "escaped")
                print(keyring.get_password("tab\\there", ""))
                print(keyring.get_password("%sv:looks-encoded", "line\\nbreak"))
                print(repr(keyring.get_credential("tab\\there", None).username))
                """])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "encoded\nescaped\n''\n", "\(result.stdout)")
            #expect(try cli.run(["retrieve", "pypi.org", "ada"]).text == "plain")
            #expect(try cli.run(["retrieve", "%sv:tab%09here", "%sv:"]).text == "encoded")
            #expect(try cli.run(["retrieve", "%sv:%25sv:looks-encoded", "%sv:line%0Abreak"]).text == "escaped")
            cli.stopDaemon()
        }
    }
}
