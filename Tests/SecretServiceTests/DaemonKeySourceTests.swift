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
    /// `init --key-source secret-service` and the daemon, each test with its own bus and keyring.
    @Suite struct DaemonKeySourceTests {
        @Test func theDaemonUnlocksItselfAgainAfterARestart() async throws {
            let keyring = try KeyringSession()
            let cli = try DaemonHarness(busAddress: keyring.busAddress)
            let created = try cli.initSecretServiceVault(recovery: "recovery pw")
            #expect(created.status == 0, "\(created.stderr)")
            try cli.startDaemon()
            #expect(try await cli.client.status().locked == false, "the daemon did not unlock with the keyring's key: \(cli.daemonOutput())")
            #expect(try await cli.client.status().keySources == ["secret-service", "passphrase"])
            // libsecret is loaded on demand (CSecretLoader), and this daemon demanded it.
            let mapped = mappedFiles(of: try #require(cli.daemon?.pid))
            #expect(mapped.contains { $0.contains("/libsecret-1.so") }, "the keyring daemon has not loaded libsecret: \(mapped.sorted())")
            #expect(try cli.run(["store", "svc", "acct"], input: Data("token".utf8)).status == 0)
            cli.stopDaemon()

            try cli.startDaemon()
            #expect(try await cli.client.status().locked == false, "no unlock after the restart: \(cli.daemonOutput())")
            #expect(try cli.run(["retrieve", "svc", "acct"]).stdout == Data("token".utf8))
            #expect(cli.daemonOutput().contains("unlocked with its key from the desktop keyring"))
            let status = try cli.run(["status"]).text
            #expect(status.contains("key sources: secret-service, passphrase"), "\(status)")
            cli.stopDaemon()
        }

        @Test func withoutTheKeyringTheDaemonStartsLockedSaysHowToRecoverAndTheRecoveryPassphraseUnlocks() async throws {
            let keyring = try KeyringSession()
            let cli = try DaemonHarness(busAddress: keyring.busAddress)
            #expect(try cli.initSecretServiceVault(recovery: "recovery pw").status == 0)
            try cli.startDaemon()
            #expect(try cli.run(["store", "svc", "acct"], input: Data("token".utf8)).status == 0)
            cli.stopDaemon()

            keyring.stop()  // no keyring, no bus
            try cli.startDaemon()
            #expect(try await cli.client.status().locked == true)
            let log = cli.daemonOutput()
            #expect(log.contains("the vault stays locked"), "\(log)")
            #expect(log.contains("no D-Bus session bus") && log.contains("sortedvault unlock"), "\(log)")
            let retrieved = try cli.run(["retrieve", "svc", "acct"])
            #expect(retrieved.status == 2, "locked is exit code 2: \(retrieved.stderr)")

            let unlocked = try cli.run(["unlock", "--passphrase-fd", "0"], input: Data("recovery pw\n".utf8))
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            #expect(try cli.run(["retrieve", "svc", "acct"]).stdout == Data("token".utf8))
            cli.stopDaemon()
        }

        @Test func aLockedKeyringLeavesTheDaemonLockedWithTheReason() async throws {
            let keyring = try KeyringSession()
            let cli = try DaemonHarness(busAddress: keyring.busAddress)
            #expect(try cli.initSecretServiceVault(recovery: "recovery pw").status == 0)
            try keyring.lockLoginCollection()
            try cli.startDaemon()
            #expect(try await cli.client.status().locked == true)
            #expect(cli.daemonOutput().contains("desktop keyring (collection \"login\") is locked"), "\(cli.daemonOutput())")
            cli.stopDaemon()
        }

        @Test func aHungKeyringDoesNotStallTheSocketAndTheVaultUnlocksWhenItAnswers() async throws {
            let keyring = try KeyringSession()
            let cli = try DaemonHarness(busAddress: keyring.busAddress)
            #expect(try cli.initSecretServiceVault(recovery: "recovery pw").status == 0)
            kill(keyring.keyringPID, SIGSTOP)  // every libsecret call now blocks until SIGCONT
            defer { kill(keyring.keyringPID, SIGCONT) }
            // No wall-clock bound: the order proves it. The keyring stays stopped until SIGCONT below,
            // so a socket that waited for it would never open (startDaemon would throw), and a status
            // call waiting behind the stuck keyring call would never come back (the client would time
            // out and throw); answered at all, they did not wait. Then the vault unlocks only after
            // SIGCONT, which shows the keyring call was indeed pending.
            try cli.startDaemon()
            for _ in 0..<5 {
                #expect(try await cli.client.status().locked == true)
            }
            kill(keyring.keyringPID, SIGCONT)
            #expect(try await cli.waitUntilUnlocked(), "the vault did not unlock once the keyring answered: \(cli.daemonOutput())")
            cli.stopDaemon()
        }
    }

    /// A missing bus or provider is a clear, distinct error at once, not after D-Bus's 25 s timeout
    /// (a wait for a reply that cannot come), and nothing is created.
    @Suite struct AvailabilityTests {
        @Test func noSessionBusIsAClearErrorWithinASecond() throws {
            let cli = try DaemonHarness(busAddress: "unix:path=/nonexistent/sortedvault-test-bus")
            let started = ContinuousClock.now
            let result = try cli.initSecretServiceVault(recovery: "pw")
            let elapsed = ContinuousClock.now - started
            #expect(result.status == 4, "\(result.status): \(result.stderr)")
            #expect(result.stderr.contains("no D-Bus session bus"), "\(result.stderr)")
            #expect(elapsed < .seconds(12), "took \(elapsed): it waited for D-Bus's 25 s timeout, or close to it")
            #expect(!FileManager.default.fileExists(atPath: cli.root + "/data/sortedvault/vault.db"))
        }

        @Test func noSecretServiceProviderIsADifferentClearErrorWithinASecond() throws {
            let bus = try KeyringSession(keyring: false)
            let cli = try DaemonHarness(busAddress: bus.busAddress)
            let started = ContinuousClock.now
            let result = try cli.initSecretServiceVault(recovery: "pw")
            let elapsed = ContinuousClock.now - started
            #expect(result.status == 4, "\(result.status): \(result.stderr)")
            #expect(result.stderr.contains("no Secret Service provider"), "\(result.stderr)")
            #expect(!result.stderr.contains("no D-Bus session bus"))
            #expect(elapsed < .seconds(12), "took \(elapsed): it waited for D-Bus's 25 s timeout, or close to it")
        }

        @Test func aLockedKeyringAtInitIsLockedAndCreatesNothing() throws {
            let keyring = try KeyringSession()
            try keyring.lockLoginCollection()
            let cli = try DaemonHarness(busAddress: keyring.busAddress)
            let result = try cli.initSecretServiceVault(recovery: "pw")
            #expect(result.status == 2, "\(result.status): \(result.stderr)")
            #expect(result.stderr.contains("is locked"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.root + "/data/sortedvault/vault.db"))
        }
    }
}

extension SecretServiceSuite.DaemonKeySourceTests {
    /// After a lock the keyring is asked again: no recovery passphrase needed.
    @Test func afterALockTheKeyringUnlocksTheVaultAgainWithoutTheRecoveryPassphrase() async throws {
        let keyring = try KeyringSession()
        let cli = try DaemonHarness(busAddress: keyring.busAddress)
        #expect(try cli.initSecretServiceVault(recovery: "recovery pw").status == 0)
        try cli.startDaemon()
        #expect(try await cli.client.status().locked == false, "\(cli.daemonOutput())")
        #expect(try cli.run(["store", "svc", "acct"], input: Data("token".utf8)).status == 0)
        #expect(try cli.run(["lock"]).status == 0)
        #expect(try await cli.client.status().locked == true)

        let unlocked = try cli.run(["unlock"])
        #expect(unlocked.status == 0, "sortedvault unlock: \(unlocked.stderr)")
        #expect(try await cli.client.status().locked == false)
        #expect(try cli.run(["retrieve", "svc", "acct"]).stdout == Data("token".utf8))
        cli.stopDaemon()
    }
}
