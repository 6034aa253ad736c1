import Foundation
import TestSupport
import Testing
import Varlink

extension DaemonSuite {
    /// After `lock` or an auto-lock, a key-file vault unlocks again without a restart: `sortedvault
    /// unlock` and `Unlock` without a passphrase re-read the key file. Auto-lock runs on
    /// the daemon's injected clock.
    @Suite struct UnlockAgainTests {
        @Test func aKeyFileVaultUnlocksAgainAfterLockWithoutAPassphrase() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "s", "a"], input: Data("v".utf8)).status == 0)
            #expect(try cli.run(["lock"]).status == 0)
            #expect(try cli.run(["retrieve", "s", "a"]).status == 2)

            let unlocked = try cli.run(["unlock"])
            #expect(unlocked.status == 0, "sortedvault unlock: \(unlocked.stderr)")
            #expect(try cli.run(["retrieve", "s", "a"]).text == "v")

            // The method itself, without a passphrase.
            #expect(try cli.run(["lock"]).status == 0)
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            _ = try connection.call("org.sortedvault.vault.Unlock", [:])
            #expect(try connection.call("org.sortedvault.vault.Status")["locked"] == .bool(false))
            cli.stopDaemon()
        }

        @Test func aPassphraseOnlyVaultStillAsksForItsPassphrase() throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("pw")
            try cli.startDaemon()
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            do {
                _ = try connection.call("org.sortedvault.vault.Unlock", [:])
                Issue.record("a passphrase vault unlocked without its passphrase")
            } catch let error as VarlinkError {
                #expect(error.name == "org.sortedvault.vault.InvalidParameter" && error.parameters["parameter"] == "passphrase", "\(error)")
            }
            #expect(try cli.run(["unlock", "--passphrase-fd", "0"], input: Data("pw\n".utf8)).status == 0)
            cli.stopDaemon()
        }

        @Test func autoLockLocksAfterTheIdleMinutesOnTheInjectedClockAndUnlockOpensTheVaultAgain() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.writePolicy(settings: "auto_lock_minutes = 1\n")
            let clock = cli.manualClock()
            try cli.startDaemon(extraArguments: ["--unsafe-clock-file", cli.clockFile])
            #expect(try cli.run(["store", "s", "a"], input: Data("v".utf8)).status == 0)
            clock.advance(by: 50)
            #expect(try cli.run(["retrieve", "s", "a"]).text == "v", "locked before a full idle minute")

            clock.advance(by: 61)  // a full idle minute since the retrieve
            let locked = CLIHarness.eventually { (try? cli.run(["status"]).text.contains("vault: locked")) == true }
            #expect(locked, "no auto-lock after an idle minute: \(cli.daemonOutput())")
            #expect(cli.daemonOutput().contains("vault locked after 1 idle minutes"))
            #expect(try cli.run(["retrieve", "s", "a"]).status == 2)

            #expect(try cli.run(["unlock"]).status == 0)
            #expect(try cli.run(["retrieve", "s", "a"]).text == "v")
            cli.stopDaemon()
        }
    }
}
