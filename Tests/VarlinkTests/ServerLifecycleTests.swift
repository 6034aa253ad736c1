import Foundation
import Testing
import Varlink

@Suite struct ServerLifecycleTests {
    @Test func socketIsPrivateToItsOwner() async throws {
        let live = try await LiveServer()
        let attributes = try FileManager.default.attributesOfItem(atPath: live.socketPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((attributes[.type] as? FileAttributeType) == .typeSocket)
        try await live.stop()
    }

    @Test func shutdownClosesConnectionsAndRemovesTheSocket() async throws {
        let live = try await LiveServer()
        let raw = try RawClient(path: live.socketPath)
        raw.send(#"{"method":"org.example.test.Echo"}"# + "\0")
        _ = await io { raw.readFrame() }
        try await live.stop()
        #expect(await io { raw.readFrame() } == .closed)
        #expect(!FileManager.default.fileExists(atPath: live.socketPath))
        #expect(throws: VarlinkClientError.self) { try live.connect() }
        await #expect(throws: VarlinkServerError.self) { try await live.server.bind(unixSocketPath: live.socketPath) }
    }

    @Test func refusesToStealALiveSocket() async throws {
        let live = try await LiveServer()
        let other = VarlinkServer(info: VarlinkServiceInfo(vendor: "", product: "", version: "", url: ""), interfaces: [], logger: .init(label: "t"))
        await #expect(throws: VarlinkServerError.self) { try await other.bind(unixSocketPath: live.socketPath) }
        try await live.expectServesAnotherClient()
        try await live.stop()
    }

    @Test func replacesAStaleSocket() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/stale.sock"
        // A socket file with nobody listening, as a crashed server leaves behind.
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(descriptor)
        let server = VarlinkServer(info: VarlinkServiceInfo(vendor: "", product: "", version: "", url: ""), interfaces: [], logger: .init(label: "t"))
        try await server.bind(unixSocketPath: path)
        let connection = try VarlinkConnection(unixSocketPath: path)
        #expect(try await io { try connection.call("org.varlink.service.GetInfo") }["interfaces"] == ["org.varlink.service"])
        try await server.shutdown()
    }

    @Test func refusesAPathThatIsNotASocket() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/file"
        _ = FileManager.default.createFile(atPath: path, contents: Data("keep me".utf8))
        let server = VarlinkServer(info: VarlinkServiceInfo(vendor: "", product: "", version: "", url: ""), interfaces: [], logger: .init(label: "t"))
        await #expect(throws: VarlinkServerError.self) { try await server.bind(unixSocketPath: path) }
        #expect(FileManager.default.contents(atPath: path) == Data("keep me".utf8))
    }

    @Test func clientReportsAMissingDaemon() {
        #expect {
            try VarlinkConnection(unixSocketPath: "/nonexistent/varlink.sock")
        } throws: { error in
            guard case VarlinkClientError.unreachable(let path, _)? = error as? VarlinkClientError else { return false }
            return path == "/nonexistent/varlink.sock"
        }
    }
}
