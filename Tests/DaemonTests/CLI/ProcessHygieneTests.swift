import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// What the daemon process holds and claims: no descriptor of the command that started it,
    /// supplementary groups in gid rules, and a warning when secrets cannot be locked in RAM.
    @Suite struct ProcessHygieneTests {
        /// Reading a non-dumpable daemon's /proc/PID/fd and environ, and changing groups, take root.
        static let isRoot = getuid() == 0

        /// Fails, rather than skips, a test that needs root: CI runs as root, so a test that does
        /// not run there would otherwise pass without checking anything.
        static func requireRoot(_ why: String) throws {
            try #require(isRoot, "this test needs root (\(why)); run the suite as root, as CI does")
        }

        @Test func aDaemonStartedOnDemandHoldsNoDescriptorTheCommandInherited() throws {
            try Self.requireRoot("it reads the non-dumpable daemon's /proc/PID/fd")
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let marker = cli.root + "/passphrase-file"
            try "not a secret".write(toFile: marker, atomically: true, encoding: .utf8)
            // As `sortedvault unlock --passphrase-fd 7` would: the command holds descriptor 7, not close-on-exec.
            let result = try cli.run(["status"], prefix: ["/bin/sh", "-c", #"exec 7<"$0"; exec "$@""#, marker])
            #expect(result.status == 0, "\(result.stderr)")
            let daemons = cli.processesOfThisWorld().filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\($0)/exe"))?.hasSuffix("/sortedvault-cli") == true
            }
            #expect(daemons.count == 1, "daemons of this test: \(daemons)")
            for pid in daemons {
                let descriptors = openDescriptors(of: pid)
                #expect(!descriptors.isEmpty, "cannot read /proc/\(pid)/fd")
                #expect(!descriptors.values.contains(marker), "the daemon holds the command's file: \(descriptors)")
            }
        }

        @Test func aDenyByGIDRuleAlsoCoversTheSupplementaryGroups() throws {
            try Self.requireRoot("setgroups needs root")
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.writePolicy(settings: String(contentsOfFile: CLIHarness.repository + "/policy/settings.toml", encoding: .utf8))
            let rule = """
                [[rule]]
                name = "no-group-4242"
                effect = "deny"
                gids = [4242]
                operations = ["*"]
                services = ["*"]
                """
            let file = cli.configDir + "/policy/zz-deny-group.toml"
            try rule.write(toFile: file, atomically: false, encoding: .utf8)
            chmod(file, 0o600)
            try cli.startDaemon()
            // Effective gid 0 (allowed by the owner rule), 4242 only as a supplementary group.
            let member = try PeerScript.run(cli, ["groups", cli.socket, "4242"])
            #expect(member.first?.contains("PermissionDenied") == true, "a member of group 4242 was served: \(member)")
            let stranger = try PeerScript.run(cli, ["groups", cli.socket, "4243"])
            #expect(stranger.first?.contains(#""locked""#) == true, "a peer outside group 4242 was refused: \(stranger)")
        }

        @Test func aDaemonThatCannotLockMemoryWarnsOnceAndStillServes() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            // RLIMIT_MEMLOCK 0; root also loses CAP_IPC_LOCK, which would ignore the limit.
            let dropCapability = Self.isRoot ? ["/usr/bin/setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock", "--"] : []
            try cli.startDaemon(prefix: ["/usr/bin/prlimit", "--memlock=0:0", "--"] + dropCapability)
            let status = try cli.run(["status", "--no-autostart"])
            #expect(status.status == 0, "\(status.stderr)")
            let log = cli.daemonOutput()
            let warnings = log.components(separatedBy: "secret memory cannot be locked in RAM").count - 1
            #expect(warnings == 1, "the daemon said \(warnings) times that secrets may be swapped: \(log)")
            #expect(log.contains("RLIMIT_MEMLOCK at 0 KiB") && log.contains("LimitMEMLOCK"), "\(log)")
        }

        @Test func aDaemonWithEnoughLockableMemoryDoesNotWarn() throws {
            try Self.requireRoot("root (CAP_IPC_LOCK) can always lock; an ordinary user's limit depends on the machine")
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["status", "--no-autostart"]).status == 0)
            #expect(try !cli.daemonLogged("secret memory cannot be locked"), "\(cli.daemonOutput())")
        }
    }
}
