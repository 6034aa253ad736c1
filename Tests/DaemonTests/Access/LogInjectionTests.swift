import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// A program's path is chosen by whoever names the file: it may hold a newline (to forge a line),
    /// C1 controls and terminal escapes (to steer the terminal of whoever reads the log) and
    /// bidirectional overrides (to make a path read as another). Both logs escape it.
    @Suite struct LogInjectionTests {
        static let forged = "2026-01-01T00:00:00Z allowed uid=0 gid=0 pid=1 exe=\"/usr/bin/ssh\" operation=\"retrieve\""

        @Test func aProgramsPathCannotForgeLinesOrCarryControlsIntoEitherLog() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let directory = cli.root + "/evil\n" + Self.forged + "\u{85}\u{9B}31m\u{1B}[2J\u{202E}gnp\u{2028}"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let program = directory + "/sortedvault"
            try FileManager.default.copyItem(atPath: CLIHarness.executable, toPath: program)
            try cli.writePolicy(access: """
                [[rule]]
                name = "no-programs-from-the-test-root"
                effect = "deny"
                uids = ["@self"]
                executables = ["\(cli.root)/evil*"]
                operations = ["*"]
                services = ["*"]

                [[rule]]
                name = "owner"
                effect = "allow"
                uids = ["@self"]
                operations = ["*"]
                services = ["*"]

                """, settings: "")
            try cli.startDaemon()
            let denied = try cli.run(["status", "--no-autostart"], executable: program)
            #expect(denied.status == 3, "\(denied.stderr)")
            #expect(try cli.run(["status", "--no-autostart"]).status == 0)
            cli.stopDaemon()

            for (name, bytes) in [("access log", FileManager.default.contents(atPath: cli.accessLogPath)), ("daemon log", try cli.daemonLog())] {
                let log = try #require(bytes, "no \(name)")
                #expect(log.range(of: Data("\u{85}".utf8)) == nil && log.range(of: Data("\u{9B}".utf8)) == nil, "the \(name) holds a C1 control")
                #expect(log.firstIndex(of: 0x1B) == nil, "the \(name) holds a terminal escape")
                #expect(log.range(of: Data("\u{202E}".utf8)) == nil && log.range(of: Data("\u{2028}".utf8)) == nil,
                        "the \(name) holds a bidirectional override or a line separator")
                let lines = String(decoding: log, as: UTF8.self).split(separator: "\n")
                #expect(!lines.contains { $0.hasPrefix(Self.forged) || $0.hasPrefix("sortedvault access: " + Self.forged) },
                        "the \(name) holds a forged line:\n\(String(decoding: log, as: UTF8.self))")
                #expect(String(decoding: log, as: UTF8.self).contains("evil\\n2026-01-01T00:00:00Z"), "the \(name) does not name the program (escaped)")
            }
        }
    }
}
