import Foundation
import TestSupport
import VaultClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// The stumbles with passphrases and secrets, each as a new user hit it.
    @Suite struct FirstHourCLITests {
        @Test func aPipedPassphraseIsReadAndAWrongOneIsRecorded() throws {
            let cli = try CLIHarness()
            // init and unlock read a piped passphrase (they said "no terminal to prompt on").
            let created = try cli.run(["init", "--key-source", "passphrase", "--unsafe-kdf-cost-for-testing"], input: Data("correct horse\n".utf8))
            #expect(created.status == 0, "\(created.stderr)")
            let wrong = try cli.run(["unlock"], input: Data("wrong\n".utf8))
            #expect(wrong.status == 5, "\(wrong.status) \(wrong.stderr)")
            let unlocked = try cli.run(["unlock"], input: Data("correct horse\n".utf8))
            #expect(unlocked.status == 0, "\(unlocked.status) \(unlocked.stderr)")
            // Unlocking an unlocked vault asks for nothing.
            let again = try cli.run(["unlock"])
            #expect(again.status == 0 && again.text.contains("already unlocked"), "\(again.status) \(again.stderr)")
            // The wrong passphrase is in the access log as a failure, not only as an allowed call.
            // (The daemon writes that log off the request path, within 100 ms of the call.)
            var log = ""
            _ = CLIHarness.eventually {
                log = (try? String(contentsOfFile: cli.accessLogPath, encoding: .utf8)) ?? ""
                return log.contains("note=\"wrong passphrase\"")
            }
            #expect(log.contains(" failed uid=\(getuid()) ") && log.contains("operation=\"unlock\" note=\"wrong passphrase\""), "\(log)")
            // change-passphrase: a wrong current passphrase says so, and nothing changes.
            let refused = try cli.run(["change-passphrase"], input: Data("wrong\nnew one\n".utf8))
            #expect(refused.status == 5 && refused.stderr.contains("wrong current passphrase: nothing was changed"), "\(refused.stderr)")
            #expect(try cli.run(["change-passphrase"], input: Data("correct horse\nnew one\n".utf8)).status == 0)
            cli.killStrayDaemons()
        }

        @Test func aClosedPassphraseDescriptorIsNamedNotAStaleError() throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("pw")
            let result = try cli.run(["unlock", "--passphrase-fd", "7"])
            #expect(result.status == 64 && result.stderr.contains("descriptor 7 is not open"), "\(result.status) \(result.stderr)")
            cli.killStrayDaemons()
        }

        @Test func aKeyFileVaultHasNoPassphraseToChangeAndSaysSoAsBadUsage() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let result = try cli.run(["change-passphrase"], input: Data("a\nb\n".utf8))
            #expect(result.status == 64 && result.stderr.contains("no passphrase to change"), "\(result.status) \(result.stderr)")
            cli.killStrayDaemons()
        }

        /// Storing a new secret over an item dropped its label and expiry; both programs keep what
        /// the command does not give, and replace what it gives.
        @Test func storingAgainKeepsTheLabelAttributesAndExpiryUnlessGiven() async throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            #expect(try cli.run(["store", "svc", "ada", "--label", "Ada's token", "--attribute", "team=core", "--expires-in", "86400"],
                                input: Data("one".utf8)).status == 0)
            let first = try #require(try await cli.client.list(service: "svc").first)
            for (executable, secret) in [(CLIHarness.executable, "two"), (CLIHarness.executable + "-cli", "three")] {
                #expect(try cli.run(["store", "svc", "ada"], input: Data(secret.utf8), executable: executable).status == 0)
                let item = try #require(try await cli.client.list(service: "svc").first)
                #expect(item.label == "Ada's token" && item.attributes == ["team": "core"] && item.expiresAt == first.expiresAt,
                        "\(executable) dropped what it did not give: \(item)")
                #expect(try cli.run(["retrieve", "svc", "ada"]).text == secret)
            }
            #expect(try cli.run(["store", "svc", "ada", "--label", "New"], input: Data("four".utf8)).status == 0)
            let relabelled = try #require(try await cli.client.list(service: "svc").first)
            #expect(relabelled.label == "New" && relabelled.expiresAt == first.expiresAt)
            cli.killStrayDaemons()
        }

        /// An empty standard input stored a 0-byte secret with exit 0; both programs refuse it now.
        @Test func anEmptySecretIsRefusedByBothProgramsAndNothingIsStored() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            for executable in [CLIHarness.executable, CLIHarness.executable + "-cli"] {
                let result = try cli.run(["store", "svc", "empty"], executable: executable)
                #expect(result.status == 64 && result.stderr.contains("the secret is empty"), "\(executable): \(result.status) \(result.stderr)")
            }
            #expect(try cli.run(["retrieve", "svc", "empty"]).status == 1)
            cli.killStrayDaemons()
        }
    }
}
