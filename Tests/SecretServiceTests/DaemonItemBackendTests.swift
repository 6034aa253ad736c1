import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

extension SecretServiceSuite {
    /// `backend = "secret-service"`: the daemon keeps items in the desktop keyring.
    @Suite struct DaemonItemBackendTests {
        static let settings = "backend = \"secret-service\"\n"

        /// A key-file vault (so the daemon's own lock is open) whose items live in `keyring`.
        func start(_ keyring: KeyringSession) throws -> DaemonHarness {
            let cli = try DaemonHarness(busAddress: keyring.busAddress)
            try cli.writePolicy(settings: Self.settings)
            let created = try cli.run(["init", "--key-source", "keyfile"])
            guard created.status == 0 else { throw HarnessError("init failed: \(created.stderr)") }
            try cli.startDaemon()
            return cli
        }

        @Test func itemsStoredThroughTheDaemonAreKeyringItems() async throws {
            let keyring = try KeyringSession()
            let cli = try start(keyring)
            #expect(try cli.run(["store", "com.sorted.api", "ada", "--label", "Sorted"], input: Data("tok-1".utf8)).status == 0)
            #expect(try keyring.secretTool(["lookup", "service", "com.sorted.api", "account", "ada"]).stdout == Data("tok-1".utf8))
            _ = try keyring.secretTool(["store", "--label=Mail", "service", "org.example.mail", "account", "bob"], input: Data("tok-2".utf8))
            #expect(try cli.run(["retrieve", "org.example.mail", "bob"]).stdout == Data("tok-2".utf8))
            let listed = try cli.run(["list"]).text
            #expect(listed.contains("com.sorted.api"), "\(listed)")
            #expect(try cli.run(["retrieve", "com.sorted.api", "nobody"]).status == 1)
            // Nothing reached sortedvault's own file.
            let database = try Data(contentsOf: URL(fileURLWithPath: cli.root + "/data/sortedvault/vault.db"))
            #expect(database.range(of: Data("tok-1".utf8)) == nil)
            // The daemon's own lock still gates the keyring's items.
            #expect(try cli.run(["lock"]).status == 0)
            #expect(try cli.run(["retrieve", "com.sorted.api", "ada"]).status == 2)
            cli.stopDaemon()
        }

        @Test func aLockedKeyringIsLockedOverTheSocketWithItsReason() async throws {
            let keyring = try KeyringSession()
            let cli = try start(keyring)
            #expect(try cli.run(["store", "svc", "present"], input: Data("x".utf8)).status == 0)
            try keyring.lockLoginCollection()
            for account in ["present", "absent"] {
                let result = try cli.run(["retrieve", "svc", account])
                #expect(result.status == 2, "\(account): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("desktop keyring"), "\(result.stderr)")
            }
            await #expect(throws: VaultError(.locked, "")) { try await cli.client.retrieve(service: "svc", account: "absent") }
            cli.stopDaemon()
        }

        @Test func otherClientsAreServedWhileAKeyringCallIsBlocked() async throws {
            let keyring = try KeyringSession()
            let cli = try start(keyring)
            #expect(try cli.run(["store", "svc", "acct"], input: Data("tok".utf8)).status == 0)
            kill(keyring.keyringPID, SIGSTOP)
            defer { kill(keyring.keyringPID, SIGCONT) }
            // One client's retrieve is now stuck in libsecret, waiting for the stopped keyring.
            let out = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/null"))
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            defer { close(null) }
            let stuck = try Subprocess.spawn([DaemonHarness.executable, "retrieve", "svc", "acct", "--no-autostart"], environment: cli.environment,
                                             stdin: null, stdout: out.fileDescriptor, stderr: out.fileDescriptor)
            // The daemon logs its decision before it asks the keyring: from then on the call is stuck.
            var status: Int32 = 0
            let reached = DaemonHarness.eventually(within: 600) {
                ((try? String(contentsOfFile: cli.accessLogPath, encoding: .utf8)) ?? "").contains("operation=\"retrieve\"")
                    || stuck.hasExited(status: &status)
            }
            let log = (try? String(contentsOfFile: cli.accessLogPath, encoding: .utf8)) ?? "<no access log>"
            try #require(reached && log.contains("operation=\"retrieve\""), "the retrieve never reached the daemon: \(log)")
            for _ in 0..<5 {
                #expect(try await cli.client.status().locked == false)
            }
            // No wall-clock bound: the order proves it. The stuck call can only end by SIGCONT (then it
            // succeeds) or by libsecret's D-Bus timeout (then it fails). Had a status call waited behind
            // it, it would have waited out that timeout, and the retrieve would have failed.
            #expect(!stuck.hasExited(status: &status), "the retrieve finished although the keyring was stopped")
            kill(keyring.keyringPID, SIGCONT)
            #expect(stuck.wait() == 0, "the blocked retrieve failed: the status calls waited until libsecret gave up on the keyring")
            cli.stopDaemon()
        }
    }
}
