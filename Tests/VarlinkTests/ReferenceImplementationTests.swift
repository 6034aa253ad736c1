import Foundation
import Testing
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

    /// A running certification server on a socket in a temporary directory.
    final class CertificationServerProcess: @unchecked Sendable {
        let directory = TemporaryDirectory()
        let process = Process()
        var socketPath: String { directory.path + "/cert.sock" }

        init() async throws {
            process.executableURL = URL(fileURLWithPath: try serverBinary())
            process.arguments = ["--socket", socketPath]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = ContinuousClock.now + .seconds(600)
            while !FileManager.default.fileExists(atPath: socketPath), process.isRunning, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            guard FileManager.default.fileExists(atPath: socketPath) else {
                stop()
                throw SetupError("varlink-certification-server did not create \(socketPath) within 600 s")
            }
        }

        func stop() {
            if process.isRunning { process.terminate() }
        }

        /// Stops with SIGTERM and reports whether it exited cleanly and removed its socket.
        func stopAndWait() async -> (status: Int32, socketRemoved: Bool) {
            stop()
            let process = self.process
            await io { process.waitUntilExit() }
            return (process.terminationStatus, !FileManager.default.fileExists(atPath: socketPath))
        }

        deinit { stop() }
    }

    /// Runs `arguments` under `timeout 60`, returning exit status and combined output.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await io {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            process.arguments = ["60"] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
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
