#if canImport(Glibc)
import Glibc
#endif

/// A growable byte buffer for frames that may hold a secret (a Store call, a Retrieve reply): every
/// block it lets go of is zeroed first with `explicit_bzero`, which the optimiser may not drop, on
/// growth and on `deinit`. Unlike `SecureBytes` it can grow while a frame arrives; it is not
/// `mlock`ed, so keep its life as short as one call.
///
/// ```swift
/// let frame = WipedBuffer(capacity: 256)
/// frame.append(contentsOf: "{\"method\":".utf8)
/// frame.withUnsafeBytes { raw in /* send it */ }
/// ```
public final class WipedBuffer {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    /// The bytes written so far.
    public private(set) var count = 0

    public init(capacity: Int = 4096) {
        self.capacity = max(capacity, 16)
        base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit {
        explicit_bzero(base, capacity)
        base.deallocate()
    }

    /// Makes room for `extra` more bytes, moving (and wiping) the old block when it must grow.
    public func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newBase.copyMemory(from: base, byteCount: count)
        explicit_bzero(base, capacity)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    public func append(_ byte: UInt8) {
        reserve(1)
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    public func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes { append(byte) }
    }

    public func append(_ raw: UnsafeRawBufferPointer) {
        guard let source = raw.baseAddress, !raw.isEmpty else { return }
        reserve(raw.count)
        (base + count).copyMemory(from: source, byteCount: raw.count)
        count += raw.count
    }

    /// Lets `body` write up to `length` bytes at the end; it returns how many it wrote.
    public func appendInPlace(upTo length: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows -> Int {
        reserve(length)
        let written = try body(UnsafeMutableRawBufferPointer(start: base + count, count: length))
        count += max(0, min(written, length))
        return written
    }

    /// The bytes written so far; do not let the pointer escape `body`.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }
}
