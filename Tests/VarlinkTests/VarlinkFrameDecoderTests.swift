import NIOCore
import Testing
@_spi(Benchmarks) @testable import Varlink

@Suite(.timeLimit(.minutes(20))) struct VarlinkFrameDecoderTests {
    static func decoder(maxFrameBytes: Int = 2 << 20) -> VarlinkFrameDecoder {
        VarlinkFrameDecoder(maxFrameBytes: maxFrameBytes, allocator: ByteBufferAllocator())
    }

    static func text(_ next: VarlinkFrameDecoder.InboundOut?) -> String? {
        guard case .success(let frame) = next else { return nil }
        return String(buffer: frame)
    }

    @Test func aFrameSplitAcrossReadsComesOutOnceWhole() {
        var decoder = Self.decoder()
        var buffer = ByteBufferAllocator().buffer(string: "{\"meth")
        let partial = decoder.decode(buffer: &buffer)
        #expect(partial == nil)
        buffer.writeBytes(Array("od\"}".utf8) + [0] + Array("{}".utf8) + [0])
        let first = decoder.decode(buffer: &buffer)
        let second = decoder.decode(buffer: &buffer)
        let none = decoder.decode(buffer: &buffer)
        #expect(Self.text(first) == "{\"method\"}")
        #expect(Self.text(second) == "{}")
        #expect(none == nil)
        #expect(buffer.readableBytes == 0)
    }

    @Test func theBufferShrinksOnceALargeFrameIsConsumed() {
        var decoder = Self.decoder()
        var buffer = ByteBufferAllocator().buffer(bytes: Array(repeating: UInt8(ascii: "x"), count: 1 << 20) + [0] + Array("{\"partial".utf8))
        #expect(buffer.capacity >= 1 << 20)
        let large = decoder.decode(buffer: &buffer)
        guard case .success(let frame) = large else {
            Issue.record("no frame: \(String(describing: large))")
            return
        }
        #expect(frame.readableBytes == 1 << 20)
        #expect(buffer.readableBytes == 9)
        #expect(buffer.capacity <= VarlinkFrameDecoder.shrinkThreshold, "a 9-byte partial frame kept \(buffer.capacity) bytes")
        buffer.writeBytes(Array("\"}".utf8) + [0])
        let completed = decoder.decode(buffer: &buffer)
        #expect(Self.text(completed) == "{\"partial\"}", "the partial frame was lost in the move")
    }

    @Test func aFrameOverTheLimitIsRefusedBeforeItsEndAndNothingAfterComesOut() {
        var decoder = Self.decoder(maxFrameBytes: 100)
        var buffer = ByteBufferAllocator().buffer(bytes: Array(repeating: UInt8(ascii: "x"), count: 101))
        let refused = decoder.decode(buffer: &buffer)
        guard case .failure(let error) = refused else {
            Issue.record("an oversized frame was not refused")
            return
        }
        #expect(error == .frameTooLarge(limit: 100))
        #expect(buffer.readableBytes == 0)
        buffer.writeBytes(Array("{}".utf8) + [0])
        let after = decoder.decode(buffer: &buffer)
        #expect(after == nil)
        #expect(buffer.readableBytes == 0)
    }

    @Test func aWholeFrameOverTheLimitIsRefused() {
        var decoder = Self.decoder(maxFrameBytes: 4)
        var buffer = ByteBufferAllocator().buffer(bytes: Array("{\"a\"}".utf8) + [0])
        let refused = decoder.decode(buffer: &buffer)
        guard case .failure(let error) = refused else {
            Issue.record("an oversized frame was not refused")
            return
        }
        #expect(error == .frameTooLarge(limit: 4))
    }
}
