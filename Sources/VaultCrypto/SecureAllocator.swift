import CSodium
import Synchronization

/// Guarded, mlocked memory for ``SecureBytes``, with a small pool per size class. A block that
/// cannot be locked (`RLIMIT_MEMLOCK` too low) is still used, and counted by ``SecureMemory``.
///
/// `sodium_malloc` and `sodium_free` each cost an mmap, mprotects and an mlock or munlock, several
/// times per request: system calls that dwarf the work they guard. Released blocks of up to 4 KiB are zeroed and kept
/// for reuse instead, so they stay guarded and locked in memory, and no secret survives a release.
/// Larger blocks, and blocks beyond the pool's bound, go back to libsodium.
enum SecureAllocator {
    private static let sizeClasses = [32, 64, 128, 256, 512, 1024, 2048, 4096]
    private static let maximumPooledPerClass = 64

    private struct Block: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private static let pool = Locked<[[Block]]>(Array(repeating: [], count: sizeClasses.count))

    /// The capacity actually allocated for `count` bytes.
    static func capacity(for count: Int) -> Int {
        let needed = max(count, 1)
        return sizeClasses.first { $0 >= needed } ?? needed
    }

    static func allocate(capacity: Int) -> UnsafeMutableRawPointer? {
        if let index = sizeClasses.firstIndex(of: capacity),
           let block = pool.withLock({ $0[index].popLast() }) {
            return block.pointer
        }
        guard let pointer = sodium_malloc(capacity) else { return nil }
        // sodium_malloc ignores a failed mlock; lock again to find out, and report it.
        _ = SecureMemory.lock(pointer, count: capacity)
        return pointer
    }

    /// Zeroes the block, then pools it or frees it.
    static func release(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
        sodium_memzero(pointer, capacity)
        if let index = sizeClasses.firstIndex(of: capacity) {
            let pooled = pool.withLock { pool -> Bool in
                guard pool[index].count < maximumPooledPerClass else { return false }
                pool[index].append(Block(pointer: pointer))
                return true
            }
            if pooled { return }
        }
        sodium_free(pointer)
    }
}
