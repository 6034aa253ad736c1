import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a handler answers: reply parameters as `JSONValue`s, or already encoded by the handler
/// (typed messages whose secrets never became a `String`).
///
/// ```swift
/// return ["count": .int(3)]                                  // a dictionary literal is a reply
/// return .encoded(VarlinkWire.encodeParameters(reply))       // bytes of the parameters object
/// ```
///
/// A ``VarlinkAnswer`` carries it, answered now or by a task. Encoded parameters are treated as secret: the server copies them into the reply
/// buffer and zeroes that buffer once the write has completed (see ``encoded(_:)``).
public struct VarlinkReply: Sendable, ExpressibleByDictionaryLiteral {
    enum Body: Sendable {
        case parameters([String: JSONValue])
        case encoded(any VarlinkEncodedParameters)
    }

    let body: Body

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        body = .parameters(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// A reply from `JSONValue` parameters (nothing is wiped: use it for replies without secrets).
    public static func parameters(_ parameters: [String: JSONValue]) -> VarlinkReply {
        VarlinkReply(body: .parameters(parameters))
    }

    /// A reply whose `parameters` object the handler encoded itself: one JSON object, no NUL.
    ///
    /// What is wiped: the server's reply `ByteBuffer` is zeroed (through its storage, without a
    /// copy-on-write) when the write completes or fails; `parameters` itself is the handler's to
    /// wipe (VaultAPI's `WireBytes` zeroes itself when released). What is not: the kernel's socket
    /// buffer, and any copy NIO makes on a partial write (it makes none for a Unix socket: it
    /// writes from the buffer's storage).
    public static func encoded(_ parameters: any VarlinkEncodedParameters) -> VarlinkReply {
        VarlinkReply(body: .encoded(parameters))
    }

    private init(body: Body) { self.body = body }

    /// The reply frame, NUL included, and whether it must be wiped after writing.
    func frame(allocator: ByteBufferAllocator, continues: Bool) -> (buffer: ByteBuffer, isSensitive: Bool) {
        switch body {
        case .parameters(let parameters):
            return (allocator.buffer(bytes: VarlinkMessage.encodeReply(parameters, continues: continues)), false)
        case .encoded(let parameters):
            let head = Array(#"{"parameters":"#.utf8)
            let tail = Array((continues ? #","continues":true}"# : "}").utf8)
            return parameters.withUnsafeBytes { bytes in
                // Exact capacity: a ByteBuffer that grows would free its old storage unwiped.
                var buffer = allocator.buffer(capacity: head.count + bytes.count + tail.count + 1)
                buffer.writeBytes(head)
                buffer.writeBytes(bytes)
                buffer.writeBytes(tail)
                buffer.writeInteger(UInt8(0))
                return (buffer, true)
            }
        }
    }
}

/// The encoded `parameters` object of a reply (a JSON object, without NUL), kept in memory its
/// owner wipes.
public protocol VarlinkEncodedParameters: Sendable {
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
}

extension ByteBuffer {
    /// Zeroes the buffer's readable bytes in its storage, shared or not (no copy-on-write): for a
    /// reply buffer holding a secret once the channel is done with it, and for a frame once parsed.
    func wipeStorage() {
        withUnsafeReadableBytes { bytes in
            if let base = bytes.baseAddress { explicit_bzero(UnsafeMutableRawPointer(mutating: base), bytes.count) }
        }
    }
}
