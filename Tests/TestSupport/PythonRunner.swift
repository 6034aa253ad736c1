import Foundation

/// The repository's Python (`.venv`, made by scripts/install-deps) for tests that drive Python tools:
/// packages from this repository are installed with pip into a private directory on PYTHONPATH, so
/// a test runs exactly what `pip install ./clients/python` installs, without touching the venv.
public struct PythonRunner: Sendable {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    public static let python = CLIHarness.repository + "/.venv/bin/python3"

    public var environment: [String: String]
    public let site: String

    /// - Parameter scratch: a private directory of the test's; the installed packages live under it.
    public init(environment: [String: String], scratch: String) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw HarnessError("no Python venv at \(Self.python): run scripts/install-deps")
        }
        site = scratch + "/python-site"
        self.environment = environment
        self.environment["PYTHONPATH"] = site
        self.environment["PYTHONDONTWRITEBYTECODE"] = "1"
    }

    /// `pip install PROJECT` into the private directory: offline (no index, no build isolation: the
    /// venv's setuptools and wheel build it), from a copy so the source tree gets no build files.
    public func pipInstall(_ project: String) throws {
        let copy = site + "-src-" + UUID().uuidString.prefix(8)
        try FileManager.default.copyItem(atPath: project, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let result = try run(["-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
                              "--disable-pip-version-check", "--target", site, copy])
        guard result.status == 0 else { throw HarnessError("pip install \(project) failed: \(result.stderr)") }
    }

    /// Runs `python3 ARGUMENTS` with `input` on standard input.
    public func run(_ arguments: [String], input: String = "") throws -> Result {
        let (status, out, err) = try Subprocess.run([Self.python] + arguments, environment: environment, input: Data(input.utf8))
        return Result(status: status, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }
}
