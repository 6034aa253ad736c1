import Foundation
import Testing
import TestSupport
import Varlink

/// Runs the Python reference implementation (PyPI `varlink`, installed into `<repo>/.venv` by
/// `scripts/install-deps`) against `varlink-certification-server`, which `swift build --build-tests`
/// builds next to the test bundle.
@Suite(.timeLimit(.minutes(20))) struct ReferenceImplementationTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's Python, or a failure telling how to create it (never a silent skip).
    static func python() throws -> String {
        let python = repositoryRoot.appendingPathComponent(".venv/bin/python3").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw SetupError("No Python venv at \(python). Run scripts/install-deps to create it with the varlink reference package.")
        }
        return python
    }

    /// The built certification server, found beside the running test bundle.
    static func serverBinary() throws -> String {
        let testBinary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let candidates = [
            URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent("varlink-certification-server").path,
            repositoryRoot.appendingPathComponent(".build/debug/varlink-certification-server").path,
        ]
        guard let found = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw SetupError("varlink-certification-server is not built (looked at \(candidates)). Run swift build --build-tests.")
        }
        return found
    }

    /// A running certification server on a socket in a temporary directory. It and the clients run
    /// through TestSupport's `Subprocess` (posix_spawn): Foundation's `Process.run()` crashed the
    /// whole test run once (SIGSEGV in its memcpy) with two of these tests starting processes at once.
    final class CertificationServerProcess: @unchecked Sendable {
        let directory = TemporaryDirectory()
        let child: Subprocess
        /// Set once ``stopAndWait()`` reaped the child: its pid is then no longer its own.
        private var reaped = false
        var socketPath: String { directory.path + "/cert.sock" }

        init() async throws {
            let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
            defer { close(devNull) }
            child = try Subprocess.spawn([try serverBinary(), "--socket", directory.path + "/cert.sock"],
                                         environment: ProcessInfo.processInfo.environment, stdin: devNull, stdout: devNull, stderr: devNull)
            let deadline = ContinuousClock.now + .seconds(600)
            var status: Int32 = 0
            while !FileManager.default.fileExists(atPath: socketPath), ContinuousClock.now < deadline {
                guard !child.hasExited(status: &status) else {
                    throw SetupError("varlink-certification-server exited with status \(status) before creating \(socketPath)")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            guard FileManager.default.fileExists(atPath: socketPath) else {
                stop()
                throw SetupError("varlink-certification-server did not create \(socketPath) within 600 s")
            }
        }

        func stop() {
            child.signal(SIGTERM)
        }

        /// Stops with SIGTERM and reports whether it exited cleanly and removed its socket.
        func stopAndWait() async -> (status: Int32, socketRemoved: Bool) {
            stop()
            let child = self.child
            let status = await io { child.wait() }
            reaped = true
            return (status, !FileManager.default.fileExists(atPath: socketPath))
        }

        deinit {
            var status: Int32 = 0
            if !reaped, !child.hasExited(status: &status) {
                child.signal(SIGTERM)
                child.wait()
            }
        }
    }

    /// Runs `arguments`, returning exit status and output (standard output, then standard error).
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await io {
            let (status, out, err) = try Subprocess.run(arguments, environment: ProcessInfo.processInfo.environment, input: Data())
            return (status, String(decoding: out + err, as: UTF8.self))
        }
    }

    @Test func referenceCertificationClientPasses() async throws {
        let python = try Self.python()
        let server = try await CertificationServerProcess()
        let (status, output) = try await Self.run([
            python, "-m", "varlink.tests.test_certification", "--client", "--varlink=unix:\(server.socketPath)",
        ])
        #expect(status == 0, "certification client output:\n\(output)")
        #expect(output.contains("Certification passed"), "certification client output:\n\(output)")
        #expect(output.contains("End: {'all_ok': True}"))
        let stopped = await server.stopAndWait()
        #expect(stopped.status == 0)
        #expect(stopped.socketRemoved)
    }

    @Test func referenceCertificationClientPassesTwiceOnOneServer() async throws {
        let python = try Self.python()
        let server = try await CertificationServerProcess()
        for _ in 0..<2 {
            let (status, output) = try await Self.run([
                python, "-m", "varlink.tests.test_certification", "--client", "--varlink=unix:\(server.socketPath)",
            ])
            #expect(status == 0 && output.contains("Certification passed"), "\(output)")
        }
        server.stop()
    }

    @Test func referenceCLICallsGetInfo() async throws {
        let python = try Self.python()
        let server = try await CertificationServerProcess()
        let (status, output) = try await Self.run([
            python, "-m", "varlink.cli", "call", "unix:\(server.socketPath)/org.varlink.service.GetInfo", "{}",
        ])
        #expect(status == 0, "\(output)")
        let reply = try JSONValue.parse(Array(output.utf8))
        #expect(reply["interfaces"] == ["org.varlink.service", "org.varlink.certification"], "\(output)")
        #expect(reply["product"] == "varlink-certification-server")
        server.stop()
    }

    @Test func referenceCLIReportsOurErrors() async throws {
        let python = try Self.python()
        let server = try await CertificationServerProcess()
        let (_, output) = try await Self.run([
            python, "-m", "varlink.cli", "call", "unix:\(server.socketPath)/org.varlink.certification.Test01", #"{"client_id":"nope"}"#,
        ])
        #expect(output.contains("org.varlink.certification.CertificationError"), "\(output)")
        server.stop()
    }

    @Test func ourClientTalksToTheCertificationServer() async throws {
        let server = try await CertificationServerProcess()
        let path = server.socketPath
        let reply = try await io { () -> [String: JSONValue] in
            let connection = try VarlinkConnection(unixSocketPath: path, timeout: .seconds(10))
            let id = try connection.call("org.varlink.certification.Start")["client_id"] ?? nil
            _ = try connection.call("org.varlink.certification.Test01", ["client_id": id])
            return try connection.call("org.varlink.certification.Test02", ["client_id": id, "bool": true])
        }
        #expect(reply == ["int": 1])
        server.stop()
    }
}

/// A test precondition that is not met, with what to do about it.
struct SetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
