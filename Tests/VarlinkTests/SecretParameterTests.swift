import Foundation
import Testing
import Varlink

/// An interface's secret parameters reach its handler as raw bytes (never in `parameters`), and a
/// handler's encoded reply is written as given, as the final reply and as a streamed one.
@Suite(.timeLimit(.minutes(20))) struct SecretParameterTests {
    @Test func aSecretParameterIsHandedOverRawAndAnEncodedReplyIsWrittenAsGiven() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Secret","parameters":{"secret":"abc"}}"# + "\0")
        #expect(await io { client.readFrame() } == .frame(["parameters": ["secret": "cba", "inParameters": false]]))
        try await live.expectServesAnotherClient()
        try await live.stop()
    }

    @Test func anEncodedReplyCanBeStreamed() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Secret","parameters":{"secret":"xy"},"more":true}"# + "\0")
        let replies = await io { (0..<2).map { _ in client.readFrame() } }
        #expect(replies == [
            .frame(["parameters": ["secret": "yx", "inParameters": false], "continues": true]),
            .frame(["parameters": ["secret": "yx", "inParameters": false]]),
        ])
        try await live.stop()
    }

    @Test func aSecretParameterThatIsNotAStringStaysAnOrdinaryParameter() async throws {
        let live = try await LiveServer()
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Secret","parameters":{"secret":5}}"# + "\0")
        #expect(await io { client.readFrame() } == .frame(["parameters": ["secret": "", "inParameters": true]]))
        try await live.stop()
    }
}
