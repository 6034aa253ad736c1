import Benchmark
import NIOCore
@_spi(Benchmarks) import Varlink
import VaultAPI
import VaultCrypto

/// The same Retrieve through VaultAPI's typed messages (issue 11), beside the untyped benchmarks in
/// VarlinkWireBenchmarks.swift, so the before/after time and malloc counts show side by side: the
/// secret goes between SecureBytes and the frame as base64, never as a `String`.
func typedWireBenchmarks() {
    let request = VaultInterface.Retrieve.Request(service: "github.com", account: "ada@example.com")
    let callFrame = VarlinkWire.encodeCall(VaultInterface.Retrieve.self, request).withUnsafeBytes { Array($0) }
    let secret = SecureBytes(count: 1024) { bytes in
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index * 7 + 3) }
    }
    let reply = VaultInterface.Retrieve.Reply(secret: secret, item: .init(
        service: "github.com", account: "ada@example.com", label: "GitHub token for ada",
        attributes: ["kind": "token", "scope": "repo"], created: 1_795_000_000.25, modified: 1_795_000_100.5))
    let replyBody = VarlinkWire.encodeReply(reply).withUnsafeBytes { Array($0.dropLast()) }
    let limits = VaultInterface.callSecrets.limits
    let secrets = VarlinkSecretParameters(paths: Set(limits.keys)) { path, raw in SecretField.decode(raw, maxBytes: limits[path] ?? 0) }
    let allocator = ByteBufferAllocator()

    Benchmark("typed: write Retrieve call") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(VarlinkWire.encodeCall(VaultInterface.Retrieve.self, request))
        }
    }
    Benchmark("typed: frame and decode Retrieve call") { benchmark in
        var decoder = VarlinkFrameDecoder(maxFrameBytes: 1 << 20, allocator: allocator)
        for _ in benchmark.scaledIterations {
            var incoming = allocator.buffer(bytes: callFrame)
            let next = decoder.decode(buffer: &incoming).map { $0.flatMap { frame in
                frame.withUnsafeReadableBytes { VarlinkMessage.decodeCall($0, maxDepth: 64, secrets: secrets) }
            } }
            if case .success(let call) = next {
                let parameters = WireParameters(call.parameters, secrets: call.secrets.compactMapValues { $0 as? SecretField })
                blackHole(try! VaultInterface.Retrieve.Request(from: parameters))
            }
        }
    }
    Benchmark("typed: write Retrieve reply (1 KiB secret)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(VarlinkWire.encodeReply(reply))
        }
    }
    Benchmark("typed: parse Retrieve reply (1 KiB secret)") { benchmark in
        for _ in benchmark.scaledIterations {
            replyBody.withUnsafeBytes { blackHole(try! VarlinkWire.decodeReply(VaultInterface.Retrieve.self, frame: $0)) }
        }
    }
}
