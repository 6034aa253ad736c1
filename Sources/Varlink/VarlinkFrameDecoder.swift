import NIOCore

/// Splits a connection's bytes into NUL-terminated frames (without their NUL), as slices of the
/// buffer they arrived in. The frame is parsed only when its call starts (a frame that costs many
/// times its size once parsed may wait behind a slow call), and zeroed after its parse.
///
/// A frame longer than `maxFrameBytes`, even before its NUL has arrived, is the last thing
/// decoded: it comes out as the error, and everything after it is zeroed and dropped, because the
/// connection answers it and closes.
///
/// The server's framing, and the client's where a reply stream is read on an event loop
/// (`SessionClient.watch`); the micro-benchmarks under `Benchmarks/` and the fuzz target run it too.
public struct VarlinkFrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = Result<ByteBuffer, VarlinkError>

    private let maxFrameBytes: Int
    private let allocator: ByteBufferAllocator
    /// Readable bytes already known to hold no NUL.
    private var scanned = 0
    /// The error came out: nothing after it is decoded.
    private var refused = false

    /// Storage above this capacity that the bytes left after a frame use only a quarter of is
    /// replaced by a small copy, so one large message does not pin its memory while more follow.
    static let shrinkThreshold = 64 * 1024

    public init(maxFrameBytes: Int, allocator: ByteBufferAllocator) {
        self.maxFrameBytes = maxFrameBytes
        self.allocator = allocator
    }

    public mutating func decode(buffer: inout ByteBuffer) -> InboundOut? {
        guard !refused else {
            Self.discard(&buffer)
            return nil
        }
        let view = buffer.readableBytesView
        guard let nul = view[(view.startIndex + scanned)...].firstIndex(of: 0) else {
            scanned = view.count
            return view.count > maxFrameBytes ? refuse(&buffer) : nil
        }
        scanned = 0
        let length = nul - view.startIndex
        guard length <= maxFrameBytes, let frame = buffer.readSlice(length: length) else { return refuse(&buffer) }
        buffer.moveReaderIndex(forwardBy: 1)
        shrinkIfSparse(&buffer)
        return .success(frame)
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) -> InboundOut? {
        decode(buffer: &buffer)
    }

    private mutating func refuse(_ buffer: inout ByteBuffer) -> InboundOut {
        refused = true
        Self.discard(&buffer)
        return .failure(.frameTooLarge(limit: maxFrameBytes))
    }

    private func shrinkIfSparse(_ buffer: inout ByteBuffer) {
        guard buffer.capacity > Self.shrinkThreshold, buffer.readableBytes <= buffer.capacity / 4 else { return }
        var small = allocator.buffer(capacity: buffer.readableBytes)
        small.writeImmutableBuffer(buffer)
        Self.discard(&buffer)
        buffer = small
    }

    private static func discard(_ buffer: inout ByteBuffer) {
        buffer.wipeStorage()
        buffer.moveReaderIndex(to: buffer.writerIndex)
    }
}
