import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Accumulates bytes from a connection and hands out NUL-terminated frames, wiping every byte it
/// releases: frames may carry secrets, so no copy is left behind in freed memory.
///
/// Growth is done by hand (copy, then zero the old storage) because letting `ByteBuffer`
/// reallocate would free the old storage unwiped.
struct FrameBuffer {
    private var storage: ByteBuffer
    private let allocator: ByteBufferAllocator
    /// Bytes after the reader index already known to contain no NUL.
    private var scanned = 0

    enum Next<R> {
        /// A complete frame, and what the body made of it.
        case frame(R)
        /// No complete frame yet.
        case needMore
        /// The next frame is longer than allowed.
        case tooLarge
    }

    init(allocator: ByteBufferAllocator) {
        self.allocator = allocator
        self.storage = allocator.buffer(capacity: 0)
    }

    /// Bytes received but not yet handed out as a frame.
    var bufferedBytes: Int { storage.readableBytes }

    /// Copies `incoming` in and zeroes `incoming`.
    mutating func append(_ incoming: inout ByteBuffer) {
        let needed = incoming.readableBytes
        if storage.writableBytes < needed {
            var replacement = allocator.buffer(capacity: max(storage.readableBytes + needed, storage.capacity * 2, 4096))
            replacement.writeImmutableBuffer(storage)
            Self.zeroAll(&storage)
            storage = replacement
        }
        storage.writeImmutableBuffer(incoming)
        incoming.withUnsafeMutableReadableBytes { bytes in
            if let base = bytes.baseAddress { memset(base, 0, bytes.count) }
        }
    }

    /// Passes the next complete frame (without its NUL) to `body`, then zeroes it; or reports why not.
    mutating func nextFrame<R>(maxBytes: Int, _ body: (UnsafeRawBufferPointer) -> R) -> Next<R> {
        let view = storage.readableBytesView
        let searchStart = view.index(view.startIndex, offsetBy: scanned)
        guard let nul = view[searchStart...].firstIndex(of: 0) else {
            scanned = view.count
            return view.count > maxBytes ? .tooLarge : .needMore
        }
        let length = nul - view.startIndex
        guard length <= maxBytes else { return .tooLarge }
        let result = storage.withUnsafeMutableReadableBytes { bytes -> R in
            let frame = UnsafeRawBufferPointer(rebasing: bytes[0..<length])
            let result = body(frame)
            memset(bytes.baseAddress!, 0, length + 1)
            return result
        }
        storage.moveReaderIndex(forwardBy: length + 1)
        scanned = 0
        if storage.readableBytes == 0 { storage.clear() }
        return .frame(result)
    }

    /// Zeroes and drops everything buffered.
    mutating func wipe() {
        Self.zeroAll(&storage)
        storage = allocator.buffer(capacity: 0)
        scanned = 0
    }

    private static func zeroAll(_ buffer: inout ByteBuffer) {
        buffer.withVeryUnsafeMutableBytes { bytes in
            if let base = bytes.baseAddress { memset(base, 0, bytes.count) }
        }
    }
}
