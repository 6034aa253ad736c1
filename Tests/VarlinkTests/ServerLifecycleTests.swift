import Foundation
import Synchronization
import Testing
import Varlink

private let sampled = Mutex<Set<String>?>(nil)
private let binding = Mutex(true)

private func currentUmask() -> String? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    return status.split(separator: "\n").first { $0.hasPrefix("Umask:") }.map { String($0.dropFirst(6)).trimmingCharacters(in: .whitespaces) }
}

@Suite(.timeLimit(.minutes(20))) struct ServerLifecycleTests {
    @Test func socketIsPrivateToItsOwner() async throws {
        let live = try await LiveServer()
        let attributes = try FileManager.default.attributesOfItem(atPath: live.socketPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((attributes[.type] as? FileAttributeType) == .typeSocket)
        try await live.stop()
    }

    /// The process umask is shared by every thread: a bind that changed it let children spawned
    /// meanwhile inherit 0177 (a nested `swift build` then could not run its own manifest, and
    /// Chromium did not start), and two overlapping binds could leave it changed for good.
    @Test func bindingNeverChangesTheProcessUmask() async throws {
        let before = try #require(currentUmask())
        binding.withLock { $0 = true }
        let sampler = Thread {
            var seen = Set<String>()
            while binding.withLock({ $0 }) { if let mask = currentUmask() { seen.insert(mask) } }
            sampled.withLock { $0 = seen }
        }
        sampler.start()
        let directory = TemporaryDirectory()
        let root = directory.path
        let servers = try await withThrowingTaskGroup(of: VarlinkServer.self) { group in
            for index in 0..<32 {
                group.addTask {
                    let server = VarlinkServer(info: VarlinkServiceInfo(vendor: "", product: "", version: "", url: ""), interfaces: [], logger: .init(label: "t"))
                    try await server.bind(unixSocketPath: root + "/s\(index).sock")
                    return server
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        binding.withLock { $0 = false }
        while sampled.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(5)) }
        for index in 0..<32 {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/s\(index).sock")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
        }
        for server in servers { try await server.shutdown() }
        #expect(sampled.withLock { $0 } == [before])
        #expect(currentUmask() == before)
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
