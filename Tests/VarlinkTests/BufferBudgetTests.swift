import Foundation
import Testing
import Varlink

/// One connection's memory is bounded by bytes, not by messages: behind a call in progress, the
/// server decodes at most what one read brought, and reads nothing more while a call waits.
@Suite(.timeLimit(.minutes(20))) struct BufferBudgetTests {
    /// A frame of `size` bytes (NUL included) calling Echo with a long text.
    static func echoFrame(size: Int) -> [UInt8] {
        let head = Array(#"{"method":"org.example.test.Echo","parameters":{"text":""#.utf8)
        let tail = Array(#""}}"#.utf8) + [0]
        return head + Array(repeating: UInt8(ascii: "x"), count: size - head.count - tail.count) + tail
    }

    @Test func pipelinedFramesBehindASlowCallStayInTheClientsSocket() async throws {
        let live = try await LiveServer { $0.maxFrameBytes = 64 * 1024 }
        let client = try RawClient(path: live.socketPath)
        client.send(#"{"method":"org.example.test.Sleep","parameters":{"milliseconds":1500,"tag":1}}"# + "\0")
        var accepted = 0
        let frame = Self.echoFrame(size: 60 * 1024)
        // 200 frames of 60 KiB (12 MB) would all be taken if the server read ahead without bound.
        while accepted < 200, client.trySend(frame) { accepted += 1 }
        #expect(accepted < 200, "the server read \(accepted) frames of 60 KiB behind a slow call")
        #expect(accepted * 60 < 1024, "\(accepted * 60) KiB were taken behind a slow call")
        try await live.expectServesAnotherClient()
        try await live.stop()
    }
}
