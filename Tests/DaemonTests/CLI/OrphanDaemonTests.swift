import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// A daemon whose socket path no longer leads to it exits cleanly, as gpg-agent does (issue
    /// 13.5). The check runs every minute on the daemon's clock; the tests advance the clock file.
    @Suite struct OrphanDaemonTests {
        @Test func aDaemonWhoseSocketFileWasRemovedExitsCleanly() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            let clock = cli.manualClock()
            try cli.startDaemon(extraArguments: ["--unsafe-clock-file", cli.clockFile])
            let daemon = try #require(cli.daemon)
            #expect(unlink(cli.socket) == 0)
            clock.advance(by: 61)
            var status: Int32 = -1
            #expect(CLIHarness.eventually { daemon.hasExited(status: &status) }, "the orphaned daemon still runs: \(cli.daemonOutput())")
            #expect(status == 0)
            #expect(cli.daemonOutput().contains("was removed"), "\(cli.daemonOutput())")
            #expect(cli.daemonOutput().contains("stopped"), "no clean shutdown: \(cli.daemonOutput())")
            // Its lock is released: a new daemon serves the same directory.
            try cli.startDaemon()
            #expect(try cli.run(["status"]).status == 0)
            cli.stopDaemon()
        }

        @Test func aDaemonWhosePathASecondDaemonTookOverExitsAndLeavesTheNewSocketAlone() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            let clock = cli.manualClock()
            try cli.startDaemon(extraArguments: ["--unsafe-clock-file", cli.clockFile])
            let first = try #require(cli.daemon)
            // The runtime directory is deleted (socket and lock file with it), and a second daemon starts there.
            try FileManager.default.removeItem(atPath: cli.runtimeDir + "/sortedvault")
            let log = open(cli.root + "/second.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            defer { close(log); close(null) }
            let second = try Subprocess.spawn([CLIHarness.executable, "daemon", "--unsafe-clock-file", cli.clockFile],
                                              environment: cli.environment, stdin: null, stdout: log, stderr: log)
            defer { second.signal(SIGTERM); second.wait() }
            #expect(CLIHarness.eventually { cli.socketAnswers() }, "the second daemon did not start")

            clock.advance(by: 61)
            var status: Int32 = -1
            #expect(CLIHarness.eventually { first.hasExited(status: &status) }, "the replaced daemon still runs: \(cli.daemonOutput())")
            #expect(status == 0)
            #expect(cli.daemonOutput().contains("replaced by another"), "\(cli.daemonOutput())")
            // The first daemon's shutdown left the second's socket in place, and the second keeps serving.
            #expect(cli.socketAnswers())
            #expect(try cli.run(["status"]).status == 0)
        }
    }
}
