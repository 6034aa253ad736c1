import Foundation
import Testing
import Varlink

/// Calls an interface answers now (``VarlinkAnswer/reply(_:)``): answered on the connection's event
/// loop without a task, in order with the calls that take the task path, and counted as activity by the idle timer.
@Suite(.timeLimit(.minutes(20))) struct OnLoopCallTests {
    @Test func aCallAnsweredOnTheLoopRunsWithoutATask() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Now","parameters":{"tag":1}}"# + "\0"
            + #"{"method":"org.example.test.Now","parameters":{"tag":-2}}"# + "\0")
        let replies = await io { [client.readFrame(), client.readFrame()] }
        #expect(replies == [.frame(["parameters": ["tag": 1, "inTask": false]]), .frame(["parameters": ["tag": -2, "inTask": true]])])
        try await live.stop()
    }

    @Test func pipelinedCallsOnTheLoopAndInTasksAreAnsweredInOrder() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Sleep","parameters":{"milliseconds":100,"tag":1}}"# + "\0"
            + #"{"method":"org.example.test.Now","parameters":{"tag":2}}"# + "\0"
            + #"{"method":"org.example.test.Now","parameters":{"tag":-3}}"# + "\0"
            + #"{"method":"org.example.test.Now","parameters":{"tag":4}}"# + "\0")
        let tags = await io { (0..<4).map { _ in client.readFrame() } }.map { read -> Int64? in
            guard case .frame(let object) = read else { return nil }
            return object["parameters"]?.objectValue?["tag"]?.intValue
        }
        #expect(tags == [1, 2, -3, 4])
        try await live.stop()
    }

    @Test func anErrorThrownOnTheLoopIsRepliedAndTheConnectionGoesOn() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Now","parameters":{"tag":-1000}}"# + "\0"
            + #"{"method":"org.example.test.Now","parameters":{"tag":5}}"# + "\0")
        let replies = await io { [client.readFrame(), client.readFrame()] }
        #expect(errorName(replies[0]) == "org.varlink.service.MethodNotImplemented")
        #expect(replies[1] == .frame(["parameters": ["tag": 5, "inTask": false]]))
        try await live.stop()
    }

    @Test func thousandsOfLoopCallsInOneWriteAreAllAnswered() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        let count = 3000
        let request = (0..<count).map { #"{"method":"org.example.test.Now","parameters":{"tag":\#($0)}}"# + "\0" }.joined()
        let sender = Task.detached { client.send(request) }
        let tags = await io { (0..<count).map { _ -> Int64? in
            guard case .frame(let object) = client.readFrame() else { return nil }
            return object["parameters"]?.objectValue?["tag"]?.intValue
        } }
        await sender.value
        #expect(tags == (0..<count).map { Int64($0) })
        try await live.stop()
    }

    @Test func aConnectionServedOnlyOnTheLoopIsNotIdle() async throws {
        let live = try await LiveServer { $0.idleTimeout = .seconds(3) }
        let client = try RawClient(path: live.socketPath)
        // One thread of its own sends, reads and pauses, so a busy test process cannot stretch the pauses.
        let replies = await io {
            (0..<12).map { tag -> RawClient.Read in
                client.send(#"{"method":"org.example.test.Now","parameters":{"tag":\#(tag)}}"# + "\0")
                let reply = client.readFrame()
                usleep(300_000)
                return reply
            }
        }
        #expect(replies == (0..<12).map { .frame(["parameters": ["tag": .int(Int64($0)), "inTask": false]]) })
        // 3.6 s of calls answered on the loop kept it open past the 3 s timeout (a pause of 0.3 s leaves a
        // loaded machine room: a full suite run stretched each call here to 0.9 s); quiet now, it closes.
        #expect(await io { client.readFrame() } == .closed)
        try await live.stop()
    }
}
