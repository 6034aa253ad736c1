import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// The repository's scripts a new user runs first: scripts/demo's arguments, and the venv check that
    /// scripts/install-deps and scripts/test share.
    @Suite struct ScriptTests {
        static func script(_ name: String, _ arguments: [String], environment: [String: String]) throws -> (Int32, String, String) {
            let (status, out, err) = try Subprocess.run(["/bin/bash", CLIHarness.repository + "/scripts/" + name] + arguments,
                                                        environment: environment, input: Data())
            return (status, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
        }

        /// Without the toolchain on the PATH: a demo that went on to build would fail.
        static let noToolchain = ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]

        @Test func theDemoPrintsItsUsageWithoutInstallingOrBuilding() throws {
            let (status, out, err) = try Self.script("demo", ["--help"], environment: Self.noToolchain)
            #expect(status == 0, "\(err)")
            #expect(out.hasPrefix("usage: scripts/demo"))
        }

        @Test func theDemoRefusesAnUnknownOptionWithItsUsage() throws {
            let (status, out, err) = try Self.script("demo", ["--bogus"], environment: Self.noToolchain)
            #expect(status == 64)
            #expect(out.isEmpty && err.hasPrefix("usage: scripts/demo"))
        }

        /// What an interrupted `python3 -m venv` leaves: python3 without pip. install-deps made no new venv
        /// over it and then failed on `.venv/bin/pip` at every run.
        @Test func aVenvWithPythonButNoPipIsMadeAgain() throws {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sv-venv-\(UUID().uuidString.prefix(8))").path
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let venv = scratch + "/.venv"
            let (made, _, madeErrors) = try Subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", venv], environment: Self.noToolchain, input: Data())
            try #require(made == 0, "\(String(decoding: madeErrors, as: UTF8.self))")
            #expect(try Self.script("lib/ensure-venv", ["--check", venv], environment: Self.noToolchain).0 == 1)

            let (status, _, err) = try Self.script("lib/ensure-venv", [venv], environment: Self.noToolchain)
            #expect(status == 0 && err.contains("making it again"), "\(err)")
            let (pip, _, _) = try Subprocess.run([venv + "/bin/python3", "-m", "pip", "--version"], environment: Self.noToolchain, input: Data())
            #expect(pip == 0)
            #expect(try Self.script("lib/ensure-venv", ["--check", venv], environment: Self.noToolchain).0 == 0)
        }
    }
}
