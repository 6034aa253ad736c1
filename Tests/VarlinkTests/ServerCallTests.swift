import Foundation
import Testing
import Varlink

@Suite(.timeLimit(.minutes(20))) struct ServerCallTests {
    @Test func pipelinedCallsAreAnsweredInOrder() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(
            #"{"method":"org.example.test.Sleep","parameters":{"milliseconds":100,"tag":1}}"# + "\0"
            + #"{"method":"org.example.test.Sleep","parameters":{"milliseconds":0,"tag":2}}"# + "\0"
            + #"{"method":"org.example.test.Echo","parameters":{"text":"three"}}"# + "\0")
        let replies = await io { (0..<3).map { _ in client.readFrame() } }
        #expect(replies == [
            .frame(["parameters": ["tag": 1]]), .frame(["parameters": ["tag": 2]]), .frame(["parameters": ["text": "three"]]),
        ])
        try await live.stop()
    }

    @Test func onewayCallsGetNoReply() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Record","parameters":{"value":"first"},"oneway":true}"# + "\0"
            + #"{"method":"org.example.test.Recorded"}"# + "\0")
        #expect(await io { client.readFrame() } == .frame(["parameters": ["values": ["first"]]]))
        try await live.stop()
    }

    @Test func moreCallsStreamReplies() async throws {
        let live = try await LiveServer()
        let connection = try live.connect()
        let numbers = try await io {
            var numbers: [Int64] = []
            try connection.callMore("org.example.test.Count", ["to": 5]) { reply in
                numbers.append(reply["number"]?.intValue ?? -1)
                return true
            }
            return numbers
        }
        #expect(numbers == [0, 1, 2, 3, 4])

        let raw = try RawClient(path: live.socketPath)
        raw.send(#"{"method":"org.example.test.Count","parameters":{"to":2},"more":true}"# + "\0")
        let frames = await io { [raw.readFrame(), raw.readFrame()] }
        #expect(frames == [.frame(["parameters": ["number": 0], "continues": true]), .frame(["parameters": ["number": 1]])])

        await #expect(throws: VarlinkError.expectedMore) { try await io { try connection.call("org.example.test.Count", ["to": 2]) } }
        try await live.stop()
    }

    @Test func stoppingAStreamEarlyLeavesTheServerHealthy() async throws {
        let live = try await LiveServer()
        let connection = try live.connect()
        let seen = try await io {
            var seen = 0
            try connection.callMore("org.example.test.Count", ["to": 1000]) { _ in
                seen += 1
                return seen < 3
            }
            return seen
        }
        #expect(seen == 3)
        #expect(throws: VarlinkClientError.connectionClosed) { try connection.call("org.example.test.Echo") }
        try await live.expectServesAnotherClient()
        try await live.stop()
    }

    @Test func serviceInterface() async throws {
        let live = try await LiveServer()
        let connection = try live.connect()
        let info = try await io { try connection.call("org.varlink.service.GetInfo") }
        #expect(info["interfaces"] == ["org.varlink.service", "org.example.test"])
        #expect(info["product"] == "varlink-tests")
        let description = try await io {
            try connection.call("org.varlink.service.GetInterfaceDescription", ["interface": "org.example.test"])
        }
        #expect(description["description"]?.stringValue?.hasPrefix("interface org.example.test") == true)
        await #expect(throws: VarlinkError.interfaceNotFound("org.nope")) {
            try await io { try connection.call("org.varlink.service.GetInterfaceDescription", ["interface": "org.nope"]) }
        }
        try await live.stop()
    }

    static let errorCases: [(String, [String: JSONValue], VarlinkError)] = [
        ("org.nope.Method", [:], .interfaceNotFound("org.nope")),
        ("NoDot", [:], .interfaceNotFound("")),
        ("org.example.test.Undeclared", [:], .methodNotFound("org.example.test.Undeclared")),
        ("org.example.test.NotImplemented", [:], .methodNotImplemented("org.example.test.NotImplemented")),
        ("org.example.test.Typed", [:], .invalidParameter("s")),
        ("org.example.test.Typed", ["s": "x", "i": "1"], .invalidParameter("i")),
        ("org.example.test.Typed", ["s": "x", "i": 1, "b": true, "o": 3], .invalidParameter("o")),
        ("org.example.test.Fail", [:], .internalError),
    ]

    @Test func standardErrorsKeepTheConnectionUsable() async throws {
        let live = try await LiveServer()
        let connection = try live.connect()
        for (method, parameters, expected) in Self.errorCases {
            let outcome = try await io { () -> Result<[String: JSONValue], VarlinkError> in
                do { return .success(try connection.call(method, parameters)) } catch let error as VarlinkError { return .failure(error) }
            }
            #expect(outcome == .failure(expected), "\(method)")
            if case .failure(let error) = outcome { #expect(!"\(error)".contains("hunter2")) }
        }
        let typed = try await io { try connection.call("org.example.test.Typed", ["s": "x", "i": 1, "b": true, "o": nil]) }
        #expect(typed == [:])
        #expect(try await io { try connection.call("org.example.test.Echo", ["text": "ok"]) } == ["text": "ok"])
        try await live.stop()
    }

    @Test func peerCredentialsComeFromTheKernel() async throws {
        let live = try await LiveServer()
        let connection = try live.connect()
        let reply = try await io { try connection.call("org.example.test.WhoAmI") }
        #expect(reply["uid"]?.intValue == Int64(getuid()))
        #expect(reply["gid"]?.intValue == Int64(getgid()))
        #expect(reply["pid"]?.intValue == Int64(getpid()))
        let ownExecutable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(reply["executable"]?.stringValue == ownExecutable)
        try await live.stop()
    }
}
