import CSodium
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Whether secret memory really stays out of swap.
///
/// `sodium_malloc` tries to `mlock` every block but ignores a failure, which is what happens when
/// `RLIMIT_MEMLOCK` is too low (and the process lacks `CAP_IPC_LOCK`): the secrets are then still
/// guarded and wiped, but the kernel may write them to swap. ``SecureAllocator`` locks each new
/// block again and counts the failures here, so the daemon can say so instead of claiming a
/// guarantee it does not have.
///
/// ```swift
/// SecureMemory.onFirstLockFailure { failure in logger.warning("\(failure)") }
/// _ = SecureMemory.probe()   // at start: one block, so a low limit is reported at once
/// ```
public enum SecureMemory {
    /// Why a block could not be locked, and the limit in force.
    public struct LockFailure: Sendable, CustomStringConvertible {
        /// `errno` of `mlock`.
        public let code: Int32
        /// `RLIMIT_MEMLOCK` (soft) in bytes; nil = unlimited.
        public let limitBytes: UInt64?

        public var description: String {
            let limit = limitBytes.map { "\($0 / 1024) KiB" } ?? "unlimited"
            return "mlock failed (\(String(cString: strerror(code)))) with RLIMIT_MEMLOCK at \(limit)"
        }
    }

    private struct State {
        var failures = 0
        var first: LockFailure?
        var handler: (@Sendable (LockFailure) -> Void)?
    }

    private static let state = Locked(State())

    /// Blocks of secret memory that could not be locked since start.
    public static var lockFailures: Int { state.withLock { $0.failures } }

    /// Sets the function called (once) on the first block that cannot be locked. If a block has
    /// already failed, it is called at once.
    public static func onFirstLockFailure(_ handler: @escaping @Sendable (LockFailure) -> Void) {
        let first = state.withLock { state -> LockFailure? in
            state.handler = handler
            return state.first
        }
        if let first { handler(first) }
    }

    /// Allocates, locks and frees one block of secret memory; false (and the handler called) when
    /// it cannot be locked.
    @discardableResult
    public static func probe() -> Bool {
        ensureSodium()
        guard let block = sodium_malloc(64) else { return false }
        defer { sodium_free(block) }
        return lock(block, count: 64)
    }

    /// Locks a block `sodium_malloc` returned (locking twice is harmless); records a failure.
    static func lock(_ pointer: UnsafeMutableRawPointer, count: Int) -> Bool {
        guard mlock(pointer, count) != 0 else { return true }
        let failure = failure(errno: errno)
        let handler = state.withLock { state -> (@Sendable (LockFailure) -> Void)? in
            state.failures += 1
            guard state.first == nil else { return nil }
            state.first = failure
            return state.handler
        }
        handler?(failure)
        return false
    }

    private static func failure(errno code: Int32) -> LockFailure {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit)
        return LockFailure(code: code, limitBytes: limit.rlim_cur == rlim_t.max ? nil : UInt64(limit.rlim_cur))
    }
}
