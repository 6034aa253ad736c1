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
/// reallocate would free the old storage unwiped. The storage also shrinks again: once the
/// frames that made it grow are consumed, what remains moves to a small buffer, so one large
/// message does not pin its memory for the life of the connection.
///
/// Internal to the server; `@_spi(Benchmarks)` only so the micro-benchmarks under `Benchmarks/`
/// (a separate package) can time it.
@_spi(Benchmarks) public struct FrameBuffer {
    private var storage: ByteBuffer
    private let allocator: ByteBufferAllocator
    /// Bytes after the reader index already known to contain no NUL.
    private var scanned = 0
    /// The offset (from the reader index) of the first NUL, once found.
    private var firstNUL: Int?

    /// Storage at or below this capacity is never shrunk: reallocating it would cost more than it frees.
    static let shrinkThreshold = 64 * 1024

    public enum Next<R> {
        /// A complete frame, and what the body made of it.
        case frame(R)
        /// No complete frame yet.
        case needMore
        /// The next frame is longer than allowed.
        case tooLarge
    }

    public init(allocator: ByteBufferAllocator) {
        self.allocator = allocator
        self.storage = allocator.buffer(capacity: 0)
    }

    /// Bytes received but not yet handed out as a frame.
    public var bufferedBytes: Int { storage.readableBytes }

    /// Bytes of memory the buffer holds, used or not.
    var capacity: Int { storage.capacity }

    /// Whether a whole frame (up to its NUL) is buffered.
    var hasCompleteFrame: Bool {
        mutating get { locateFirstNUL() != nil }
    }

    /// Copies `incoming` in and zeroes `incoming`.
    public mutating func append(_ incoming: inout ByteBuffer) {
        let needed = incoming.readableBytes
        if storage.writableBytes < needed {
            reallocate(capacity: Self.roundedCapacity(storage.readableBytes + needed))
        }
        storage.writeImmutableBuffer(incoming)
        incoming.withUnsafeMutableReadableBytes { bytes in
            if let base = bytes.baseAddress { memset(base, 0, bytes.count) }
        }
    }

    /// Passes the next complete frame (without its NUL) to `body`, then zeroes it; or reports why not.
    public mutating func nextFrame<R>(maxBytes: Int, _ body: (UnsafeRawBufferPointer) -> R) -> Next<R> {
        guard let length = locateFirstNUL() else {
            return storage.readableBytes > maxBytes ? .tooLarge : .needMore
        }
        guard length <= maxBytes else { return .tooLarge }
        let result = storage.withUnsafeMutableReadableBytes { bytes -> R in
            let frame = UnsafeRawBufferPointer(rebasing: bytes[0..<length])
            let result = body(frame)
            memset(bytes.baseAddress!, 0, length + 1)
            return result
        }
        storage.moveReaderIndex(forwardBy: length + 1)
        scanned = 0
        firstNUL = nil
        if storage.readableBytes == 0 { storage.clear() }
        shrinkIfSparse()
        return .frame(result)
    }

    /// Zeroes and drops everything buffered.
    public mutating func wipe() {
        Self.zeroAll(&storage)
        storage = allocator.buffer(capacity: 0)
        scanned = 0
        firstNUL = nil
    }

    private mutating func locateFirstNUL() -> Int? {
        if let firstNUL { return firstNUL }
        let view = storage.readableBytesView
        let searchStart = view.index(view.startIndex, offsetBy: scanned)
        guard let nul = view[searchStart...].firstIndex(of: 0) else {
            scanned = view.count
            return nil
        }
        firstNUL = nul - view.startIndex
        return firstNUL
    }

    /// Moves the unread bytes to a smaller buffer when they use a small part of a large one.
    private mutating func shrinkIfSparse() {
        guard storage.capacity > Self.shrinkThreshold, storage.readableBytes <= storage.capacity / 4 else { return }
        reallocate(capacity: Self.roundedCapacity(storage.readableBytes))
    }

    /// Copies the unread bytes into fresh storage of `capacity` bytes and zeroes the old storage.
    private mutating func reallocate(capacity: Int) {
        var replacement = allocator.buffer(capacity: capacity)
        replacement.writeImmutableBuffer(storage)
        Self.zeroAll(&storage)
        storage = replacement
    }

    /// The next power of two at or above `count`, at least 4 KiB.
    private static func roundedCapacity(_ count: Int) -> Int {
        var capacity = 4096
        while capacity < count { capacity <<= 1 }
        return capacity
    }

    private static func zeroAll(_ buffer: inout ByteBuffer) {
        buffer.withVeryUnsafeMutableBytes { bytes in
            if let base = bytes.baseAddress { memset(base, 0, bytes.count) }
        }
    }
}
