import Testing
@testable import Varlink

/// A closed connection must leave nothing of itself in the server: the handler, its context, the
/// pipeline and the channel. Until this test, every served connection stayed in memory for the
/// server's lifetime (the handler held its context, which holds the handler), about 4.6 KiB each.
@Suite struct ConnectionMemoryTests {
    @Test func everyClosedConnectionIsFreed() async throws {
        let live = try await LiveServer { $0.idleTimeout = .milliseconds(500) }
        let path = live.socketPath
        // Calls answered on the event loop and in a task, each on a connection the client closes.
        try await io {
            for index in Int64(0)..<20 {
                let connection = try VarlinkConnection(unixSocketPath: path, timeout: .seconds(5))
                defer { connection.close() }
                #expect(try connection.call("org.example.test.Now", ["tag": .int(index)])["tag"] == .int(index))
                #expect(try connection.call("org.example.test.Echo", ["text": "hello"]) == ["text": "hello"])
            }
        }
        // A connection the server closes after an error, and one it closes when idle.
        let broken = try RawClient(path: path)
        broken.send(Array("[1,2]".utf8) + [0])
        #expect(await io { broken.readUntilClosed() })
        let idle = try RawClient(path: path)
        #expect(await io { idle.readUntilClosed() })

        #expect(await live.eventually { live.server.connectionCount == 0 })
        #expect(await live.eventually { live.server.liveConnectionHandlers == 0 },
                "\(live.server.liveConnectionHandlers) closed connections are still in memory")
        try await live.stop()
    }
}
