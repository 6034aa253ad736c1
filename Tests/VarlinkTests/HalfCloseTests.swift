import Foundation
import Testing
import Varlink

/// Clients that write their requests and then shut down their writing side (`socat`, `nc -U`,
/// `printf … |`): every complete request is answered before the server closes.
@Suite(.timeLimit(.minutes(20))) struct HalfCloseTests {
    @Test func aRequestFollowedByAHalfCloseIsAnsweredThenClosed() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Echo","parameters":{"text":"one"}}"# + "\0")
        client.shutdownWrite()
        let (first, second) = await io { (client.readFrame(), client.readFrame()) }
        #expect(first == .frame(["parameters": ["text": "one"]]))
        #expect(second == .closed)
        try await live.stop()
    }

    @Test func everyPipelinedRequestBeforeTheHalfCloseIsAnsweredInOrder() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Sleep","parameters":{"milliseconds":200,"tag":1}}"# + "\0"
            + #"{"method":"org.example.test.Echo","parameters":{"text":"two"}}"# + "\0"
            + #"{"method":"org.example.test.Echo","parameters":{"text":"incomp"#)
        client.shutdownWrite()
        let replies = await io { (0..<3).map { _ in client.readFrame() } }
        #expect(replies == [.frame(["parameters": ["tag": 1]]), .frame(["parameters": ["text": "two"]]), .closed])
        try await live.stop()
    }

    @Test func aBrokenMessageBeforeTheHalfCloseStillGetsItsError() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method": "# + "\0")
        client.shutdownWrite()
        let (first, second) = await io { (client.readFrame(), client.readFrame()) }
        #expect(errorName(first) == "org.sortedvault.varlink.InvalidMessage")
        #expect(second == .closed)
        try await live.stop()
    }
}
