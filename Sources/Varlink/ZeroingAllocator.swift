@_spi(CustomByteBufferAllocator) import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ByteBufferAllocator {
    /// Buffers whose memory is zeroed before it is freed or moved. A connection's buffers hold
    /// frames with secrets, and NIO grows, merges and drops them as it reads and decodes: with this
    /// allocator none of those copies is left behind in freed memory.
    static let zeroing = ByteBufferAllocator(
        allocate: { zeroingAllocate($0) },
        reallocate: { pointer, _, newSize in zeroingReallocate(pointer, newSize) },
        deallocate: { zeroingFree($0) },
        copy: { destination, source, count in destination.copyMemory(from: source, byteCount: count) })
}

/// Each block starts with its size (the allocator is not told the size on free), padded to keep
/// malloc's alignment.
private let header = 16

private func zeroingAllocate(_ size: Int) -> UnsafeMutableRawPointer? {
    guard let base = malloc(size + header) else { return nil }
    base.storeBytes(of: size, as: Int.self)
    return base + header
}

private func zeroingReallocate(_ pointer: UnsafeMutableRawPointer?, _ newSize: Int) -> UnsafeMutableRawPointer? {
    guard let pointer else { return zeroingAllocate(newSize) }
    guard let moved = zeroingAllocate(newSize) else { return nil }
    let oldSize = (pointer - header).load(as: Int.self)
    moved.copyMemory(from: pointer, byteCount: min(oldSize, newSize))
    zeroingFree(pointer)
    return moved
}

private func zeroingFree(_ pointer: UnsafeMutableRawPointer) {
    let base = pointer - header
    explicit_bzero(pointer, base.load(as: Int.self))
    free(base)
}
