import Foundation
import Testing
import TestSupport
import VaultCore

extension PostgresSuite {
    /// Backups across the two kinds of store: a one-host vault's backup restores into a fleet's
    /// database through one daemon and is read through another; a backup of the fleet (one
    /// PostgreSQL snapshot) restores into a one-host vault.
    @Suite struct FleetBackupTests {
        static let accessToken = "fleet-backup-access-\(UUID().uuidString.prefix(6))"
        static let passphrase = "fleet backup \(UUID().uuidString.prefix(6))"

        /// `arguments` with the passphrase on descriptor 3, never on the command line.
        static func withPassphrase(_ cli: CLIHarness, _ arguments: [String]) throws -> CLIHarness.Result {
            try cli.run(arguments + ["--passphrase-fd", "3"], prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3<<EOF\n\(passphrase)\nEOF"])
        }

        @Test func aBackupMovesBetweenAOneHostVaultAndAFleet() throws {
            let single = try CLIHarness()
            try single.initKeyFileVault()
            try single.startDaemon()
            defer { single.stopDaemon() }
            #expect(try single.run(["store", "com.example.api", "bot"], input: Data("fleet-item-secret".utf8)).status == 0)
            let response = #"{"access_token":"\#(Self.accessToken)","token_type":"Bearer","expires_in":86400,"refresh_token":"fleet-refresh"}"#
            #expect(try single.run(["session", "save", "com.example.app", "ada", "--token-endpoint", "http://127.0.0.1:9/token",
                                    "--client-id", "backup-test"], input: Data(response.utf8)).status == 0)
            let file = single.root + "/single.age"
            let exported = try Self.withPassphrase(single, ["export", "--to", file])
            #expect(exported.status == 0, "\(exported.stderr)")

            // Into the fleet through host 0; host 1 reads it from the shared database.
            let fleet = try FleetDaemons(count: 2, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let restored = try Self.withPassphrase(fleet.hosts[0], ["import", file])
            #expect(restored.status == 0 && restored.text.contains("Stored 1 item.") && restored.text.contains("Logins: 1 restored"),
                    "\(restored.text) \(restored.stderr)")
            #expect(try fleet.hosts[1].run(["retrieve", "com.example.api", "bot"]).text == "fleet-item-secret")
            let login = try fleet.hosts[1].run(["session", "autologin", "com.example.app", "ada"])
            #expect(login.status == 0 && login.text == Self.accessToken, "\(login.stderr)")

            // The fleet's own backup, from its database, restores into a new one-host vault.
            #expect(try fleet.hosts[1].run(["store", "com.example.fleet", "only"], input: Data("made-in-the-fleet".utf8)).status == 0)
            let fleetFile = fleet.hosts[1].root + "/fleet.age"
            let fleetExport = try Self.withPassphrase(fleet.hosts[1], ["export", "--to", fleetFile])
            #expect(fleetExport.status == 0 && fleetExport.text.contains("2 items and 1 login"), "\(fleetExport.text) \(fleetExport.stderr)")
            let fresh = try CLIHarness()
            try fresh.initKeyFileVault()
            try fresh.startDaemon()
            defer { fresh.stopDaemon() }
            let back = try Self.withPassphrase(fresh, ["import", fleetFile])
            #expect(back.status == 0 && back.text.contains("Stored 2 items."), "\(back.text) \(back.stderr)")
            #expect(try fresh.run(["retrieve", "com.example.fleet", "only"]).text == "made-in-the-fleet")
            #expect(try fresh.run(["session", "autologin", "com.example.app", "ada"]).text == Self.accessToken)
        }
    }
}
