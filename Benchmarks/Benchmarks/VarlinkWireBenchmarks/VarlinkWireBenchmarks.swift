import Benchmark
import NIOCore
@_spi(Benchmarks) import Varlink

/// The varlink wire as one Retrieve crosses it: the client writes the call, the daemon frames and
/// decodes it, writes the reply, and the client parses the reply. The reply carries a 1 KiB secret
/// (base64, as today) and the item's metadata, like the one `scripts/bench` retrieves.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .instructions, .mallocCountTotal, .throughput],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: .seconds(2)
    )
    let method = "org.sortedvault.vault.Retrieve"
    let callParameters: [String: JSONValue] = ["service": .string("github.com"), "account": .string("ada@example.com")]
    let callFrame = VarlinkMessage.encodeCall(method, callParameters)
    let replyParameters = WireSamples.retrieveReply
    let replyFrame = VarlinkMessage.encodeReply(replyParameters)
    let replyBody = Array(replyFrame.dropLast())  // what the client parses: the frame without its NUL
    let allocator = ByteBufferAllocator()

    Benchmark("write Retrieve call") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(VarlinkMessage.encodeCall(method, callParameters))
        }
    }
    Benchmark("frame and decode Retrieve call") { benchmark in
        var decoder = VarlinkFrameDecoder(maxFrameBytes: 1 << 20, allocator: allocator)
        for _ in benchmark.scaledIterations {
            var incoming = allocator.buffer(bytes: callFrame)
            blackHole(decoder.decode(buffer: &incoming).map { $0.flatMap { frame in
                frame.withUnsafeReadableBytes { VarlinkMessage.decodeCall($0, maxDepth: 64) }
            } })
        }
    }
    Benchmark("write Retrieve reply (1 KiB secret)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(VarlinkMessage.encodeReply(replyParameters))
        }
    }
    Benchmark("parse Retrieve reply (1 KiB secret)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! JSONValue.parse(replyBody))
        }
    }
    typedWireBenchmarks()
    Benchmark("frame Retrieve reply (1 KiB secret)") { benchmark in
        var decoder = VarlinkFrameDecoder(maxFrameBytes: 1 << 20, allocator: allocator)
        for _ in benchmark.scaledIterations {
            var incoming = allocator.buffer(bytes: replyFrame)
            blackHole(decoder.decode(buffer: &incoming))
        }
    }
}
