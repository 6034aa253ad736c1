import Foundation
import Testing
@testable import Varlink

@Suite(.timeLimit(.minutes(20))) struct ServerRobustnessTests {
    struct BadInput: CustomTestStringConvertible, Sendable {
        let label: String
        let bytes: [UInt8]
        /// The error reply expected before the server closes; nil when it should just close.
        let error: String?
        var closeWrite = false
        var testDescription: String { label }
    }

    static let invalidMessage = "org.sortedvault.varlink.InvalidMessage"

    static let badInputs: [BadInput] = [
        BadInput(label: "frame over the limit without NUL", bytes: Array(repeating: UInt8(ascii: "a"), count: 5000), error: "org.sortedvault.varlink.FrameTooLarge"),
        BadInput(label: "frame over the limit with NUL", bytes: Array(repeating: UInt8(ascii: " "), count: 5000) + Array(#"{"method":"a.b"}"#.utf8) + [0], error: "org.sortedvault.varlink.FrameTooLarge"),
        BadInput(label: "3,000 nested arrays", bytes: Array(repeating: UInt8(ascii: "["), count: 3000) + [0], error: invalidMessage),
        BadInput(label: "invalid JSON", bytes: Array(#"{"method":"#.utf8) + [0], error: invalidMessage),
        BadInput(label: "invalid UTF-8", bytes: Array(#"{"method":"org.example.test.Echo","parameters":{"text":""#.utf8) + [0xFF, 0xFE] + Array(#""}}"#.utf8) + [0], error: invalidMessage),
        BadInput(label: "lone surrogate", bytes: Array(#"{"method":"org.example.test.Echo","parameters":{"text":"\ud800"}}"#.utf8) + [0], error: invalidMessage),
        BadInput(label: "trailing garbage", bytes: Array(#"{"method":"org.example.test.Echo"} x"#.utf8) + [0], error: invalidMessage),
        BadInput(label: "not an object", bytes: Array("[1,2]".utf8) + [0], error: invalidMessage),
        BadInput(label: "no method", bytes: Array(#"{"parameters":{}}"#.utf8) + [0], error: invalidMessage),
        BadInput(label: "method not a string", bytes: Array(#"{"method":42}"#.utf8) + [0], error: invalidMessage),
        BadInput(label: "parameters not an object", bytes: Array(#"{"method":"org.example.test.Echo","parameters":[]}"#.utf8) + [0], error: invalidMessage),
        BadInput(label: "more not a boolean", bytes: Array(#"{"method":"org.example.test.Echo","more":"yes"}"#.utf8) + [0], error: invalidMessage),
        BadInput(label: "empty frame", bytes: [0], error: invalidMessage),
        BadInput(label: "no NUL then EOF", bytes: Array(#"{"method":"org.example.test.Echo"}"#.utf8), error: nil, closeWrite: true),
    ]

    @Test(arguments: badInputs)
    func badInputIsRefusedAndOthersAreServed(input: BadInput) async throws {
        let live = try await LiveServer { $0.maxFrameBytes = 4096 }
        let client = try RawClient(path: live.socketPath)
        client.send(input.bytes)
        if input.closeWrite { client.shutdownWrite() }
        let expectsError = input.error != nil
        let (first, second) = await io { (client.readFrame(), expectsError ? client.readFrame() : .closed) }
        if let error = input.error {
            #expect(errorName(first) == error)
            #expect(second == .closed)
        } else {
            #expect(first == .closed)
        }
        try await live.expectServesAnotherClient()
        try await live.stop()
    }

    @Test func hundredThousandNestedArrays() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(Array(repeating: UInt8(ascii: "["), count: 100_000) + [0])
        let (first, second) = await io { (client.readFrame(), client.readFrame()) }
        #expect(errorName(first) == Self.invalidMessage)
        #expect(second == .closed)
        try await live.expectServesAnotherClient()
        try await live.stop()
    }

    @Test func clientThatNeverReadsIsThrottledAndTimedOut() async throws {
        let live = try await LiveServer { $0.idleTimeout = .milliseconds(300) }
        let flooder = try RawClient(path: live.socketPath)
        let request = Array(#"{"method":"org.example.test.Echo","parameters":{"text":""#.utf8)
            + Array(repeating: UInt8(ascii: "x"), count: 1000) + Array(#""}}"#.utf8) + [0]
        var sent = 0
        while sent < 10_000, flooder.trySend(request) { sent += 1 }
        // The server stopped reading long before 10,000 requests (about 10 MB).
        #expect(sent < 10_000)
        try await live.expectServesAnotherClient()
        // The idle timeout closes the stalled connection without the flooder reading anything.
        #expect(await live.eventually { live.server.connectionCount == 0 })
        try await live.stop()
    }

    @Test func idleConnectionsAreClosed() async throws {
        // 1 s, not less: the timer also runs from the accept to the first call, and a loaded machine
        // once took longer than 200 ms between connecting and sending (the Echo was never answered).
        // A connection closed before its Echo arrived tested nothing, and the test goes again.
        let live = try await LiveServer { $0.idleTimeout = .seconds(1) }
        for attempt in 1... {
            let client = try RawClient(path: live.socketPath)
            let start = ContinuousClock.now
            client.send(#"{"method":"org.example.test.Echo","parameters":{"text":"\#(attempt)"}}"# + "\0" + #"{"method":"#)  // and a partial frame
            let (first, second) = await io { (client.readFrame(), client.readFrame()) }
            if first == .closed, attempt < 20, !live.interface.arrivals.recorded.contains("Echo \(attempt)") { continue }
            #expect(first == .frame(["parameters": ["text": .string("\(attempt)")]]))
            #expect(second == .closed)
            let elapsed = ContinuousClock.now - start
            // Closed (not timed out) by the idle timer, never before it; how long after it depends on the
            // machine's load, so only the client's hang guard bounds it.
            #expect(elapsed >= .milliseconds(900), "closed after \(elapsed), idle timeout 1 s")
            break
        }
        try await live.stop()
    }

    @Test func aLongCallIsNotIdle() async throws {
        // The idle timer runs from the accept until the call arrives too; a connection closed before
        // the call arrived tested nothing, and the call goes again on another one.
        let live = try await LiveServer { $0.idleTimeout = .seconds(1) }
        let (reply, tag) = try await live.callArrivingOnAFreshConnection("Sleep") { attempt in
            (["milliseconds": 3000, "tag": .int(Int64(attempt))], Int64(attempt))
        }
        #expect(reply == ["tag": .int(tag)])
        try await live.stop()
    }

    @Test func connectionsOverThePerUIDLimitAreRefused() async throws {
        let live = try await LiveServer {
            $0.maxConnectionsPerUID = 4
            $0.connectionsReservedForNewProcesses = 0  // all four from this one process
        }
        var connections = try (0..<4).map { _ in try live.connect() }
        for connection in connections { _ = try await io { try connection.call("org.example.test.Echo") } }
        let refused = try RawClient(path: live.socketPath)
        let (first, second) = await io { (refused.readFrame(), refused.readFrame()) }
        #expect(errorName(first) == "org.sortedvault.varlink.ConnectionLimitReached")
        #expect(second == .closed)
        #expect(live.server.connectionCount == 4)
        connections.removeLast().close()
        #expect(await live.eventually { live.server.connectionCount == 3 })
        try await live.expectServesAnotherClient()
        try await live.stop()
    }

    @Test func connectionsOverTheTotalLimitAreRefused() async throws {
        let live = try await LiveServer { $0.maxConnections = 2 }
        let first = try live.connect(), second = try live.connect()
        _ = try await io { try first.call("org.example.test.Echo") }
        _ = try await io { try second.call("org.example.test.Echo") }
        let third = try live.connect()
        await #expect(throws: VarlinkError.connectionLimitReached) { try await io { try third.call("org.example.test.Echo") } }
        try await live.stop()
    }

    @Test func twoThousandConnectionsDoNotHurtLaterClients() async throws {
        let live = try await LiveServer()
        let path = live.socketPath
        var clients = try await io { try (0..<2000).map { _ in try RawClient(path: path) } }
        #expect(live.server.connectionCount <= 64)
        clients.removeAll()
        // Closed connections may still wait in the backlog, and each the server takes counts until it
        // sees the close: wait until it took and closed all 2,000.
        #expect(await live.eventually { live.server.acceptedConnections == 2000 && live.server.connectionCount == 0 })
        try await live.expectServesAnotherClient()
        try await live.stop()
    }
}
