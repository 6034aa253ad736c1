import Foundation
import TestSupport
import Testing
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// The built `sortedvault` binary against a real daemon on a real socket.
    @Suite struct EndToEndTests {
        @Test func roundTripOfA1KiBSecretThroughTheBinaryLeavesNoPlaintextOnDisk() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let secret = SecureRandom.bytes(count: 1024)
            let service = "com.e2e.\(UUID().uuidString.prefix(8))"
            let account = "acct-\(UUID().uuidString.prefix(8))"

            #expect(try cli.run(["store", service, account], input: Data(secret)).status == 0)
            let retrieved = try cli.run(["retrieve", service, account])
            #expect(retrieved.status == 0)
            #expect(Array(retrieved.stdout) == secret, "retrieve did not return exactly the stored bytes")
            let listed = try cli.run(["list"])
            #expect(listed.text.contains(service) && listed.text.contains(account))
            let json = try cli.run(["list", "--json", "--service", service])
            #expect(json.status == 0 && json.text.contains("\"account\" : \"\(account)\""))

            let needles: [[UInt8]] = [secret, Array(service.utf8), Array(account.utf8),
                                      Array(Data(secret).base64EncodedString().utf8),
                                      Array(secret.map { String(format: "%02x", $0) }.joined().utf8)]
            func scan() -> [String] {
                cli.dataFiles().flatMap { name, bytes in needles.compactMap { bytes.range(of: Data($0)) == nil ? nil : name } }
            }
            #expect(scan().isEmpty, "secret or names found in the data files while stored")

            #expect(try cli.run(["delete", service, account]).status == 0)
            let missing = try cli.run(["retrieve", service, account])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("no item"))
            #expect(scan().isEmpty, "secret or names found in the data files after delete")
            #expect(cli.stopDaemon() == 0)
            #expect(!FileManager.default.fileExists(atPath: cli.socket), "the socket was not removed on SIGTERM")
        }

        @Test func passphraseVaultStartsLockedAndUnlocksThroughTheCLI() throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("open sesame")
            try cli.startDaemon()
            let locked = try cli.run(["retrieve", "s", "a"])
            #expect(locked.status == 2)
            #expect(locked.stderr.contains("sortedvault unlock"))
            let wrong = try cli.run(["unlock", "--passphrase-fd", "0"], input: Data("not it\n".utf8))
            #expect(wrong.status == 5)
            #expect(!wrong.stderr.contains("not it"))
            // The failed attempt throttles the next one for a second.
            usleep(1_100_000)
            #expect(try cli.run(["unlock", "--passphrase-fd", "0"], input: Data("open sesame\n".utf8)).status == 0)
            #expect(try cli.run(["store", "s", "a"], input: Data("v".utf8)).status == 0)
            #expect(try cli.run(["retrieve", "s", "a"]).text == "v")
            #expect(try cli.run(["status"]).text.contains("unlocked"))
            #expect(try cli.run(["lock"]).status == 0)
            #expect(try cli.run(["retrieve", "s", "a"]).status == 2)
            #expect(try cli.run(["delete", "s", "missing"]).status == 2, "locked must win over not found")
            cli.stopDaemon()
        }

        @Test func aSecretOnTheCommandLineIsRefused() throws {
            let cli = try CLIHarness()
            let result = try cli.run(["store", "s", "a", "hunter2"])
            #expect(result.status == 64)
            #expect(result.stderr.contains("refusing a secret on the command line"))
            #expect(!result.stderr.contains("hunter2"))
        }

        @Test func theCLIStartsTheDaemonOnDemand() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            #expect(!cli.socketAnswers())
            #expect(try cli.run(["store", "svc", "acct"], input: Data("x".utf8)).status == 0)
            #expect(cli.socketAnswers())
            #expect(try cli.run(["retrieve", "svc", "acct"]).text == "x")
            cli.killStrayDaemons()
        }

        /// A daemon the CLI starts that cannot start gives its own reason through the CLI,
        /// with exit 7 (it said "did not start; run sortedvault daemon" with exit 4), from the lean
        /// front (retrieve) and the full CLI (list) alike; and a policy directory holding only
        /// settings.toml, as the README suggests for auto-lock, starts with the built-in policy.
        @Test func aDaemonThatCannotStartSaysWhyThroughTheCLI() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.writePolicy(access: "[[rule]]\nname = \"broken\"\neffect = \"maybe\"\n", settings: "")
            for verb in [["retrieve", "svc", "acct"], ["list"]] {
                let result = try cli.run(verb)
                #expect(result.status == 7, "\(verb): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("the daemon did not start: refusing to start") && result.stderr.contains("access.toml"),
                        "\(verb): \(result.stderr)")
            }
            #expect(!cli.socketAnswers())

            try FileManager.default.removeItem(atPath: cli.configDir + "/policy/access.toml")
            try "auto_lock_minutes = 5\n".write(toFile: cli.configDir + "/policy/settings.toml", atomically: false, encoding: .utf8)
            #expect(try cli.run(["store", "svc", "acct"], input: Data("x".utf8)).status == 0)
            #expect(try cli.run(["retrieve", "svc", "acct"]).text == "x")
            cli.killStrayDaemons()
        }

        @Test func withoutAutostartAnAbsentDaemonIsItsOwnExitCode() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let result = try cli.run(["status", "--no-autostart"])
            #expect(result.status == 4)
            #expect(result.stderr.contains("sortedvault daemon"))
        }

        @Test func aSecondDaemonDoesNotTakeOverALiveSocketButAStaleOneIsReplaced() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let second = try cli.run(["daemon"])
            #expect(second.status != 0)
            #expect(second.stderr.contains("already"))
            #expect(cli.socketAnswers(), "the live daemon lost its socket")
            cli.killDaemon()
            #expect(FileManager.default.fileExists(atPath: cli.socket), "SIGKILL should leave a stale socket behind")
            try cli.startDaemon()
            #expect(try cli.run(["status"]).status == 0)
            cli.stopDaemon()
        }

        /// What systemd's socket activation does: bind the socket, pass it as descriptor 3 with
        /// LISTEN_PID and LISTEN_FDS, and exec the daemon (same pid).
        @Test func aSocketActivatedDaemonServesTheInheritedListener() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try FileManager.default.createDirectory(atPath: cli.runtimeDir + "/sortedvault", withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
            let launcher = """
                import os, socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.bind(sys.argv[1]); s.listen(16)
                if s.fileno() != 3:
                    os.dup2(s.fileno(), 3)
                os.set_inheritable(3, True)
                os.environ["LISTEN_FDS"] = "1"; os.environ["LISTEN_PID"] = str(os.getpid())
                os.execv(sys.argv[2], [sys.argv[2], "daemon"])
                """
            let log = open(cli.daemonLogPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            let daemon = try Subprocess.spawn(["/usr/bin/python3", "-c", launcher, cli.socket, CLIHarness.executable],
                                              environment: cli.environment, stdin: null, stdout: log, stderr: log)
            close(log); close(null)
            defer { daemon.signal(SIGKILL); daemon.wait() }
            // Wait for the launcher's socket: one probe connection at a time, and none after the first
            // that connects (a `for … where` loop here made 1,000 probes, whose slots the daemon then
            // still counted when `store` connected).
            var probes = 0
            while !cli.socketAnswers(), probes < 1000 {
                probes += 1
                usleep(10_000)
            }
            let stored = try cli.run(["store", "s", "a", "--no-autostart"], input: Data("activated".utf8))
            #expect(stored.status == 0, "\(stored.stderr) / daemon: \(cli.daemonOutput())")
            #expect(try cli.run(["retrieve", "s", "a", "--no-autostart"]).text == "activated")
            #expect(cli.daemonOutput().contains("inherited"))
            daemon.signal(SIGTERM)
            #expect(daemon.wait() == 0)
        }

        @Test func theSocketIsPrivate() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let socketMode = try FileManager.default.attributesOfItem(atPath: cli.socket)[.posixPermissions] as? Int
            let directoryMode = try FileManager.default.attributesOfItem(atPath: cli.runtimeDir + "/sortedvault")[.posixPermissions] as? Int
            #expect(socketMode == 0o600)
            #expect(directoryMode == 0o700)
            cli.stopDaemon()
        }

        @Test func aSymlinkedSocketDirectoryIsRefused() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try FileManager.default.createDirectory(atPath: cli.root + "/elsewhere", withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(atPath: cli.runtimeDir + "/sortedvault", withDestinationPath: cli.root + "/elsewhere")
            let result = try cli.run(["daemon"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("symbolic link"))
        }

        @Test func helpExistsForEveryVerb() throws {
            let cli = try CLIHarness()
            for verb in ["init", "store", "retrieve", "delete", "list", "status", "lock", "unlock", "change-passphrase", "log", "daemon"] {
                let result = try cli.run([verb, "--help"])
                #expect(result.status == 0, "\(verb) --help failed")
                #expect(result.text.contains("USAGE"), "\(verb) --help printed no usage")
            }
            #expect(try cli.run(["--generate-completion-script", "bash"]).text.contains("_sortedvault"))
        }
    }
}
