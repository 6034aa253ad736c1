import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// The Python backend trusts only this user's own daemon, and finds one as the other clients do:
    /// it starts it when none answers, and says so when sortedvault is not installed.
    @Suite struct PythonKeyringTrustTests {
        typealias PlantedServer = PlantedSocketTests.PlantedServer

        @Test func keyringSendsNothingToASocketAnotherUserServes() throws {
            let cli = try CLIHarness()
            let setup = try PlantedSocketTests.plantedBehindOwnLink(cli)
            try expectKeyringRefuses(cli, runtime: setup.runtime, planted: setup.planted, reason: "served by a process of uid \(setup.uid)")
            withExtendedLifetime(setup.theirs) {}
        }

        @Test func keyringRefusesASocketInAGroupWritableDirectory() throws {
            let cli = try CLIHarness()
            let runtime = cli.root + "/shared-run"
            try FileManager.default.createDirectory(atPath: runtime + "/sortedvault", withIntermediateDirectories: true)
            chmod(runtime + "/sortedvault", 0o770)
            let planted = try PlantedServer(as: nil, socket: runtime + "/sortedvault/socket")
            try expectKeyringRefuses(cli, runtime: runtime, planted: planted, reason: "is writable by others (mode 770)")
        }

        @Test func keyringStartsTheDaemonWhenNoneRuns() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            #expect(!cli.socketAnswers(), "a daemon already runs")
            let python = try Self.backend(cli, path: Self.directory(of: CLIHarness.executable) + ":/usr/bin:/bin")
            let set = try python.run(["-m", "keyring", "set", "pypi.org", "ada"], input: "started-on-demand\n")
            #expect(set.status == 0, "\(set.stderr)")
            #expect(cli.socketAnswers(), "keyring did not start the daemon")
            #expect(try cli.run(["retrieve", "pypi.org", "ada"]).text == "started-on-demand")
        }

        @Test func keyringWithoutSortedvaultInstalledKeepsTheBackendAndNamesSortedvault() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let python = try Self.backend(cli, path: "/usr/bin:/bin")
            let backends = try python.run(["-m", "keyring", "--list-backends"])
            #expect(backends.stdout.contains("SortedVaultKeyring (priority: 9)"), "\(backends.stdout)\(backends.stderr)")
            let get = try python.run(["-m", "keyring", "get", "pypi.org", "ada"])
            #expect(get.status != 0)
            #expect(get.stderr.contains("the `sortedvault` command is not on PATH"), "\(get.stderr)")
            #expect(!get.stderr.contains("No recommended backend"), "\(get.stderr)")
            #expect(!cli.socketAnswers())
        }

        /// keyring, by default and with our backend forced, against `planted`: our backend is not
        /// chosen, a forced one refuses naming `reason`, and the planted server receives nothing.
        func expectKeyringRefuses(_ cli: CLIHarness, runtime: String, planted: PlantedServer, reason: String) throws {
            var python = try Self.backend(cli, path: Self.directory(of: CLIHarness.executable) + ":/usr/bin:/bin")
            python.environment["XDG_RUNTIME_DIR"] = runtime
            let backends = try python.run(["-m", "keyring", "--list-backends"])
            #expect(!backends.stdout.contains("SortedVaultKeyring"), "a planted socket made keyring choose our backend: \(backends.stdout)")

            for forced in [false, true] {
                var keyring = python
                if forced { keyring.environment["PYTHON_KEYRING_BACKEND"] = "sortedvault_keyring.backend.SortedVaultKeyring" }
                let set = try keyring.run(["-m", "keyring", "set", "pypi.org", "ada"], input: "planted-must-not-see-this\n")
                #expect(set.status != 0, "keyring set succeeded against the planted socket (forced: \(forced))")
                let get = try keyring.run(["-m", "keyring", "get", "pypi.org", "ada"])
                #expect(get.status != 0, "keyring get succeeded against the planted socket (forced: \(forced))")
                #expect(!get.stdout.contains("PLANTED-ANSWER"), "keyring get returned the planter's value")
                if forced {
                    for result in [set, get] {
                        #expect(result.stderr.contains("refusing to use the socket \(runtime)/sortedvault/socket: it")
                                && result.stderr.contains(reason) && result.stderr.contains("nothing was sent"), "\(result.stderr)")
                    }
                }
            }
            #expect(planted.bytesReceived().isEmpty,
                    "the planted server received: \(String(decoding: planted.bytesReceived(), as: UTF8.self))")
            try planted.expectRecordsACallSent(through: runtime + "/sortedvault/socket")
        }

        /// keyring's Python with `pip install ./clients/python`, no D-Bus session, and `path` as PATH
        /// (where the backend looks for `sortedvault` to start the daemon).
        static func backend(_ cli: CLIHarness, path: String) throws -> PythonRunner {
            var environment = cli.environment
            for name in ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "PYTHON_KEYRING_BACKEND"] {
                environment[name] = nil
            }
            environment["PATH"] = path
            let python = try PythonRunner(environment: environment, scratch: cli.root)
            try python.pipInstall(CLIHarness.repository + "/clients/python")
            return python
        }

        static func directory(of path: String) -> String { (path as NSString).deletingLastPathComponent }
    }
}
