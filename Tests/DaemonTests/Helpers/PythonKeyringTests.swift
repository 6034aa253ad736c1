import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// PyPI `keyring` (the CLI and the library) with our backend from `clients/python`, installed by
    /// pip, against a live daemon, in an environment with no D-Bus session and no display at all.
    @Suite struct PythonKeyringTests {
        @Test func keyringSetGetAndDelWorkThroughTheDaemonWithNoDBusSession() throws {
            let (cli, python) = try Self.liveDaemonAndBackend()
            let set = try python.run(["-m", "keyring", "set", "pypi.org", "ada"], input: "pypi-token-1\n")
            #expect(set.status == 0, "\(set.stderr)")
            // The secret is in the vault, under keyring's service and username, without keyring's newline.
            #expect(try cli.run(["retrieve", "pypi.org", "ada"]).text == "pypi-token-1")

            let get = try python.run(["-m", "keyring", "get", "pypi.org", "ada"])
            #expect(get.status == 0, "\(get.stderr)")
            #expect(get.stdout == "pypi-token-1\n")

            let library = try python.run(["-c", """
                import keyring
                print(type(keyring.get_keyring()).__name__)
                print(keyring.get_password("pypi.org", "ada"))
                print(keyring.get_credential("pypi.org", None).username)
                print(keyring.get_password("pypi.org", "nobody"))
                """])
            #expect(library.status == 0, "\(library.stderr)")
            #expect(library.stdout == "SortedVaultKeyring\npypi-token-1\nada\nNone\n")

            let del = try python.run(["-m", "keyring", "del", "pypi.org", "ada"])
            #expect(del.status == 0, "\(del.stderr)")
            #expect(try cli.run(["retrieve", "pypi.org", "ada"]).status == 1)
            cli.stopDaemon()
        }

        @Test func keyringsSecretServiceBackendFailsInTheSameEnvironment() throws {
            let (cli, python) = try Self.liveDaemonAndBackend()
            var forced = python
            forced.environment["PYTHON_KEYRING_BACKEND"] = "keyring.backends.SecretService.Keyring"
            let set = try forced.run(["-m", "keyring", "set", "pypi.org", "ada"], input: "pypi-token-1\n")
            #expect(set.status != 0)
            #expect(set.stderr.contains("Unable to initialize SecretService"), "\(set.stderr)")
            let get = try forced.run(["-c", "import keyring; keyring.get_password('pypi.org', 'ada')"])
            #expect(get.status != 0)
            #expect(get.stderr.contains("DBUS_SESSION_BUS_ADDRESS"), "\(get.stderr)")
            // Nothing reached the vault; our backend, same environment, does.
            #expect(try cli.run(["retrieve", "pypi.org", "ada"]).status == 1)
            #expect(try python.run(["-m", "keyring", "set", "pypi.org", "ada"], input: "pypi-token-1\n").status == 0)
            cli.stopDaemon()
        }

        @Test func errorsBecomeKeyringExceptionsThatNameTheProblemAndNeverTheSecret() throws {
            let (cli, python) = try Self.liveDaemonAndBackend(passphrase: "correct passphrase")
            #expect(try python.run(["-m", "keyring", "set", "pypi.org", "ada"], input: "top-secret-value\n").status == 0)
            let missing = try python.run(["-c", """
                import keyring, keyring.errors
                try:
                    keyring.delete_password("pypi.org", "nobody")
                except keyring.errors.PasswordDeleteError as error:
                    print("PasswordDeleteError:", error)
                """])
            #expect(missing.stdout == "PasswordDeleteError: cannot delete: no item for service 'pypi.org' and account 'nobody'\n", "\(missing.stderr)")

            #expect(try cli.run(["lock"]).status == 0)
            let locked = try python.run(["-c", """
                import keyring, keyring.errors
                for call in (lambda: keyring.get_password("pypi.org", "ada"), lambda: keyring.set_password("pypi.org", "ada", "x")):
                    try:
                        call()
                    except keyring.errors.KeyringLocked as error:
                        print("KeyringLocked:", "locked" in str(error))
                """])
            #expect(locked.stdout == "KeyringLocked: True\nKeyringLocked: True\n", "\(locked.stderr)")
            #expect(!(locked.stdout + locked.stderr + missing.stdout + missing.stderr).contains("top-secret-value"))
            cli.stopDaemon()
        }

        /// The reserved `sortedvault/…` services stay out of reach through keyring too.
        @Test func aReservedServiceIsRefusedWithPasswordSetError() throws {
            let (cli, python) = try Self.liveDaemonAndBackend()
            let result = try python.run(["-c", """
                import keyring, keyring.errors
                try:
                    keyring.set_password("sortedvault/session/x", "ada", "x")
                except keyring.errors.PasswordSetError as error:
                    print("PasswordSetError")
                """])
            #expect(result.stdout == "PasswordSetError\n", "\(result.stderr)")
            cli.stopDaemon()
        }

        /// A daemon with a vault, and keyring's Python with `pip install ./clients/python` done into a
        /// private directory; neither process sees a D-Bus session or a display.
        static func liveDaemonAndBackend(passphrase: String? = nil) throws -> (CLIHarness, PythonRunner) {
            let cli = try CLIHarness()
            if let passphrase { try cli.initPassphraseVault(passphrase) } else { try cli.initKeyFileVault() }
            try cli.startDaemon()
            if let passphrase {
                let unlocked = try cli.run(["unlock", "--passphrase-fd", "0"], input: Data((passphrase + "\n").utf8))
                guard unlocked.status == 0 else { throw HarnessError("unlock failed: \(unlocked.stderr)") }
            }
            var environment = cli.environment
            for name in ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "PYTHON_KEYRING_BACKEND"] {
                environment[name] = nil
            }
            let python = try PythonRunner(environment: environment, scratch: cli.root)
            try python.pipInstall(CLIHarness.repository + "/clients/python")
            return (cli, python)
        }
    }
}
