import Foundation
import Testing
import TestSupport
import VaultCore

extension SecretServiceSuite {
    /// `sortedvault import secret-service` against a real gnome-keyring on a private bus, filled by
    /// `secret-tool store`: every item of the default collection moves in with its attributes, a
    /// Python keyring item lands where our Python keyring backend asks, and a locked keyring is
    /// refused without a prompt and without storing anything.
    @Suite struct KeyringImportTests {
        /// A private keyring, and a key-file vault whose daemon sees that keyring's bus; the keyring
        /// is stopped again when the vault or the daemon does not start.
        func world() throws -> (KeyringSession, DaemonHarness) {
            let keyring = try KeyringSession()
            do {
                let cli = try DaemonHarness(busAddress: keyring.busAddress)
                try cli.initKeyFileVault()
                try cli.startDaemon()
                return (keyring, cli)
            } catch {
                keyring.stop()
                throw error
            }
        }

        @Test func theDefaultCollectionMovesInWithItsAttributes() async throws {
            let (keyring, cli) = try world()
            defer { cli.stopDaemon(); keyring.stop() }
            for (arguments, secret) in [
                (["--label=IMAP", "service", "org.example.mail", "account", "bob", "host", "imap.example.org"], "mail-secret"),
                (["--label=Password for 'ada' on 'https://upload.pypi.org/legacy/'", "application", "Python keyring library",
                  "service", "https://upload.pypi.org/legacy/", "username", "ada"], "pypi-token"),
                (["--label=Chrome Safe Storage", "application", "chrome"], "chrome-key"),
            ] {
                let stored = try keyring.secretTool(["store"] + arguments, input: Data(secret.utf8))
                #expect(stored.status == 0, "\(stored.stderr)")
            }
            let imported = try cli.run(["import", "secret-service"])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.text.contains("Read 3 items") && imported.text.contains("Stored 3 items."), "\(imported.text)")
            #expect(!imported.text.contains("mail-secret") && !imported.text.contains("pypi-token"))
            #expect(try cli.run(["retrieve", "org.example.mail", "bob"]).text == "mail-secret")
            #expect(try cli.run(["retrieve", "https://upload.pypi.org/legacy/", "ada"]).text == "pypi-token")
            // secret-tool stores under no schema: the item is named by its label.
            let listing = try cli.run(["list"]).text
            #expect(try cli.run(["retrieve", "keyring:item", "Chrome Safe Storage"]).text == "chrome-key", "\(listing)")
            let mail = try #require(try await cli.client.list(service: "org.example.mail").first)
            #expect(mail.label == "IMAP" && mail.attributes["host"] == "imap.example.org" && mail.attributes["xdg:schema"] == nil, "\(mail)")
            let again = try cli.run(["import", "secret-service"])
            #expect(again.status == 0 && again.text.contains("Stored 0 items."), "\(again.text) \(again.stderr)")
        }

        @Test func aLockedKeyringIsRefusedWithoutAPromptAndNothingStored() throws {
            let (keyring, cli) = try world()
            defer { cli.stopDaemon(); keyring.stop() }
            #expect(try keyring.secretTool(["store", "--label=x", "service", "s", "account", "a"], input: Data("locked-secret".utf8)).status == 0)
            try keyring.lockLoginCollection()
            let imported = try cli.run(["import", "secret-service"])
            #expect(imported.status == 2 && imported.stderr.contains("is locked"), "\(imported.status) \(imported.stderr)")
            #expect(try cli.run(["list"]).text.isEmpty)
        }
    }
}
