import Foundation
import TestSupport

/// The shared harness, pointed at a private keyring's bus (or a dead address: "no session bus"); the
/// tests start and stop the daemon themselves, so commands never start one on demand.
typealias DaemonHarness = CLIHarness

extension CLIHarness {
    convenience init(busAddress: String) throws {
        try self.init(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": busAddress], autostart: false)
    }

    /// `sortedvault init --key-source secret-service` with `recovery` as the recovery passphrase.
    func initSecretServiceVault(recovery: String) throws -> Result {
        try run(["init", "--key-source", "secret-service", "--passphrase-fd", "0", "--unsafe-kdf-cost-for-testing"],
                input: Data((recovery + "\n").utf8))
    }
}
