import Testing
@testable import Varlink

/// A closed connection must leave nothing of itself in the server: the handler, its context, the
/// pipeline and the channel. Until this test, every served connection stayed in memory for the
/// server's lifetime (the handler held its context, which holds the handler), about 4.6 KiB each.
@Suite(.timeLimit(.minutes(20))) struct ConnectionMemoryTests {
    @Test func everyClosedConnectionIsFreed() async throws {
        // The calls' server keeps the default idle timeout, so a busy machine that holds the client
        // back between connect and call cannot have the connection closed under it; the idle close
        // is checked on a server of its own.
        let live = try await LiveServer()
        let path = live.socketPath
        // Calls answered on the event loop and in a task, each on a connection the client closes.
        try await io {
            for index in Int64(0)..<20 {
                let connection = try VarlinkConnection(unixSocketPath: path, timeout: .seconds(60))
                defer { connection.close() }
                #expect(try connection.call("org.example.test.Now", ["tag": .int(index)])["tag"] == .int(index))
                #expect(try connection.call("org.example.test.Echo", ["text": "hello"]) == ["text": "hello"])
            }
        }
        // A connection the server closes after an error…
        let broken = try RawClient(path: path)
        broken.send(Array("[1,2]".utf8) + [0])
        #expect(await io { broken.readUntilClosed() })
        // …and one it closes when idle.
        let idleServer = try await LiveServer { $0.idleTimeout = .milliseconds(500) }
        let idle = try RawClient(path: idleServer.socketPath)
        #expect(await io { idle.readUntilClosed() })

        for server in [live, idleServer] {
            #expect(await server.eventually { server.server.connectionCount == 0 })
            #expect(await server.eventually { server.server.liveConnectionHandlers == 0 },
                    "\(server.server.liveConnectionHandlers) closed connections are still in memory")
            try await server.stop()
        }
    }
}
