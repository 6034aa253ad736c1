import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Through the real binaries: an older copy of vault.db (and its -wal) put back while the
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
            let recovered = try cli.run(["recover", "--accept-rollback", "--yes"])
            #expect(recovered.status == 0, "recover failed: \(recovered.stderr)")
            try cli.startDaemon()
            #expect(try cli.run(["retrieve", "login", "ada"]).text == "revoked refresh token",
                    "after accepting, the copy is the vault, rolled-back items included")
            cli.stopDaemon()
        }

        /// Recovery brought a revoked token back silently, beside a live daemon and with no
        /// confirmation. Now it needs the daemon stopped, a "yes" on a terminal (or --yes), and it
        /// leaves a line in the access log and the generation record.
        @Test func recoveryNeedsTheDaemonStoppedAConfirmationAndLeavesATrace() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "login", "ada"], input: Data("token".utf8)).status == 0)
            let beside = try cli.run(["recover", "--accept-rollback", "--yes"])
            #expect(beside.status == 7 && beside.stderr.contains("in use by process"), "\(beside.status) \(beside.stderr)")
            cli.stopDaemon()

            let unconfirmed = try cli.run(["recover", "--accept-rollback"])
            #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("no terminal to confirm on"), "\(unconfirmed.status) \(unconfirmed.stderr)")
            // On a terminal (script(1) gives it one): anything but "accept" changes nothing.
            let command = "'\(CLIHarness.executable)' recover --accept-rollback --no-autostart"
            let declined = try cli.runProgram(["/usr/bin/script", "-qec", command, "/dev/null"], input: Data("no\n".utf8))
            #expect(declined.status == 64 && declined.text.contains("not confirmed"), "\(declined.status) \(declined.text)")
            // While a recovery waits for its answer, no daemon starts on the vault.
            var input: [Int32] = [0, 0]
            #expect(pipe(&input) == 0)
            let output = open(cli.root + "/waiting.log", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            let waiting = try Subprocess.spawn(["/usr/bin/script", "-qec", command, "/dev/null"], environment: cli.environment,
                                               stdin: input[0], stdout: output, stderr: output)
            close(input[0])
            close(output)
            #expect(CLIHarness.eventually(within: 600) {
                ((try? String(contentsOfFile: cli.root + "/waiting.log", encoding: .utf8)) ?? "").contains("Type \"accept\"")
            })
            #expect(throws: HarnessError.self) { try cli.startDaemon() }
            #expect(cli.daemonOutput().contains("is being recovered by process"), "\(cli.daemonOutput())")
            _ = write(input[1], "no\n", 3)
            close(input[1])
            #expect(waiting.wait() == 64)
            let state = cli.root + "/home/.local/state/sortedvault"
            let record = try #require(try FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasPrefix("generation-") })
            #expect(!(try String(contentsOfFile: state + "/" + record, encoding: .utf8)).contains("accepted rollback"))
            let accepted = try cli.runProgram(["/usr/bin/script", "-qec", command, "/dev/null"], input: Data("accept\n".utf8))
            #expect(accepted.status == 0 && accepted.text.contains("Type \"accept\""), "\(accepted.status) \(accepted.text)")

            let recorded = try String(contentsOfFile: state + "/" + record, encoding: .utf8)
            #expect(recorded.contains("accepted rollback ") && recorded.contains("1 items"), "\(recorded)")
            let log = try cli.run(["log", "-n", "5"]).text
            #expect(log.contains(" owner uid=\(getuid()) ") && log.contains("operation=\"recover\"") && log.contains("1 items"), "\(log)")
            // The record still opens: the daemon starts and serves the item.
            try cli.startDaemon()
            #expect(try cli.run(["retrieve", "login", "ada"]).text == "token")
            cli.stopDaemon()
        }
    }
}