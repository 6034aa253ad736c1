import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// Issue 9.6 through the real binaries: an older copy of vault.db (and its -wal) put back while the
    /// daemon is stopped makes the next daemon refuse to start, naming the rollback and the recovery;
    /// `sortedvault recover --accept-rollback` accepts the copy.
    @Suite struct RollbackDaemonTests {
        @Test func aRestoredOlderVaultFileIsRefusedUntilTheRollbackIsAccepted() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "login", "ada"], input: Data("revoked refresh token".utf8)).status == 0)
            cli.stopDaemon()
            let backup = cli.root + "/backup"
            try FileManager.default.createDirectory(atPath: backup, withIntermediateDirectories: false)
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: cli.database + suffix) {
                try FileManager.default.copyItem(atPath: cli.database + suffix, toPath: backup + "/vault.db" + suffix)
            }

            try cli.startDaemon()
            #expect(try cli.run(["delete", "login", "ada"]).status == 0)  // the logout the copy would undo
            cli.stopDaemon()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.database + suffix) }
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: backup + "/vault.db" + suffix) {
                try FileManager.default.copyItem(atPath: backup + "/vault.db" + suffix, toPath: cli.database + suffix)
            }

            #expect(throws: HarnessError.self) { try cli.startDaemon() }
            #expect(cli.daemonOutput().contains("rollback detected"), "daemon said: \(cli.daemonOutput())")
            #expect(cli.daemonOutput().contains("sortedvault recover --accept-rollback"))

            let refused = try cli.run(["recover"])
            #expect(refused.status != 0, "recover without --accept-rollback must change nothing")
            let recovered = try cli.run(["recover", "--accept-rollback"])
            #expect(recovered.status == 0, "recover failed: \(recovered.stderr)")
            try cli.startDaemon()
            #expect(try cli.run(["retrieve", "login", "ada"]).text == "revoked refresh token",
                    "after accepting, the copy is the vault, rolled-back items included")
            cli.stopDaemon()
        }
    }
}
