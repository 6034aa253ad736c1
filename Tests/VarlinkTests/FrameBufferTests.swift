import NIOCore
import Testing
@_spi(Benchmarks) @testable import Varlink

@Suite struct FrameBufferTests {
    static func append(_ bytes: [UInt8], to frames: inout FrameBuffer) {
        var incoming = ByteBufferAllocator().buffer(bytes: bytes)
        frames.append(&incoming)
    }

    @Test func theBufferShrinksOnceALargeFrameIsConsumed() {
        var frames = FrameBuffer(allocator: ByteBufferAllocator())
        Self.append(Array(repeating: UInt8(ascii: "x"), count: 1 << 20) + [0] + Array("{\"partial".utf8), to: &frames)
        #expect(frames.capacity >= 1 << 20)
        let next = frames.nextFrame(maxBytes: 2 << 20) { $0.count }
        guard case .frame(let length) = next else {
            Issue.record("no frame: \(next)")
            return
        }
        #expect(length == 1 << 20)
        #expect(frames.bufferedBytes == 9)
        #expect(frames.capacity <= FrameBuffer.shrinkThreshold, "a 9-byte partial frame kept \(frames.capacity) bytes")
        Self.append(Array("\"}".utf8) + [0], to: &frames)
        guard case .frame(let text) = frames.nextFrame(maxBytes: 100, { String(decoding: $0, as: UTF8.self) }) else {
            Issue.record("the partial frame was lost in the move")
            return
        }
        #expect(text == "{\"partial\"}")
    }

    @Test func aCompleteFrameIsReportedWithoutConsumingIt() {
        var frames = FrameBuffer(allocator: ByteBufferAllocator())
        Self.append(Array("abc".utf8), to: &frames)
        let before = frames.hasCompleteFrame
        #expect(!before)
        Self.append([0], to: &frames)
        let after = frames.hasCompleteFrame
        #expect(after)
        #expect(frames.bufferedBytes == 4)
    }
}
