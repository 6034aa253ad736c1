import Foundation
import TestSupport
import Testing
import Varlink

extension DaemonSuite {
    /// A passphrase is bytes, not text: one that is not valid UTF-8 (read from a file or descriptor)
    /// creates a vault that unlock opens with the same bytes, through the CLI and over the socket.
    /// Before passphrases travelled as base64, the CLI sent `String(decoding:as: UTF8.self)` of them,
    /// which replaces invalid bytes, so such a vault could never be unlocked.
    @Suite struct NonUTF8PassphraseTests {
        static let passphrase: [UInt8] = [0xFF, 0xFE, 0x70, 0x77, 0xC3, 0x28, 0x80]
        static let newPassphrase: [UInt8] = [0x6E, 0xED, 0xA0, 0x80, 0xFF]

        @Test func aVaultInitialisedWithANonUTF8PassphraseUnlocksWithTheSameBytes() throws {
            let cli = try CLIHarness()
            let created = try cli.run(["init", "--key-source", "passphrase", "--passphrase-fd", "0", "--unsafe-kdf-cost-for-testing"],
                                      input: Data(Self.passphrase + [0x0A]))
            #expect(created.status == 0, "\(created.stderr)")
            try cli.startDaemon()
            defer { _ = cli.stopDaemon() }

            // The CLI: unlock, lock, unlock again.
            let unlocked = try cli.run(["unlock", "--passphrase-fd", "0"], input: Data(Self.passphrase + [0x0A]))
            #expect(unlocked.status == 0, "the CLI could not unlock with the init passphrase: \(unlocked.stderr)")
            #expect(try cli.run(["lock"]).status == 0)
            let again = try cli.run(["unlock", "--passphrase-fd", "0"], input: Data(Self.passphrase + [0x0A]))
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try cli.run(["status"]).text.contains("vault: unlocked"))

            // The daemon: the same bytes as base64 over the socket; a change to another non-UTF-8 passphrase.
            #expect(try cli.run(["lock"]).status == 0)
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            _ = try connection.call("org.sortedvault.vault.Unlock", ["passphrase": .string(base64(Self.passphrase))])
            _ = try connection.call("org.sortedvault.vault.ChangePassphrase",
                                    ["old": .string(base64(Self.passphrase)), "new": .string(base64(Self.newPassphrase))])
            _ = try connection.call("org.sortedvault.vault.Lock", [:])
            do {
                _ = try connection.call("org.sortedvault.vault.Unlock", ["passphrase": .string(base64(Self.passphrase))])
                Issue.record("the old passphrase still unlocks")
            } catch let error as VarlinkError {
                #expect(error.name == "org.sortedvault.vault.WrongPassphrase")
            }
            connection.close()
            let changed = try cli.run(["unlock", "--passphrase-fd", "0"], input: Data(Self.newPassphrase + [0x0A]))
            #expect(changed.status == 0, "\(changed.stderr)")
        }

        @Test func aPassphraseThatIsNotBase64IsRefusedWithoutRepeatingIt() throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("pw")
            try cli.startDaemon()
            defer { _ = cli.stopDaemon() }
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            do {
                _ = try connection.call("org.sortedvault.vault.Unlock", ["passphrase": "not base64, hunter2"])
                Issue.record("a passphrase that is not base64 was accepted")
            } catch let error as VarlinkError {
                #expect(error.name == "org.sortedvault.vault.InvalidParameter")
                #expect(error.parameters["parameter"] == "passphrase")
                #expect(error.parameters["reason"]?.stringValue?.contains("hunter2") == false)
            }
        }
    }
}
