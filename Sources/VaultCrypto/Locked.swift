import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value that threads share, behind a `Synchronization.Mutex`: the lock every module uses.
///
/// ```swift
/// private let state = Locked(State())
/// let count = state.withLock { $0.count += 1; return $0.count }
/// ```
///
/// It is `Mutex` and one thing more: when the process runs under ThreadSanitizer, each hold of the
/// lock is announced to it (`__tsan_acquire` and `__tsan_release` on the lock's address, found with
/// `dlsym` at the first use; absent, and skipped, in every other process). On Linux, `Mutex` waits
/// on a futex that ThreadSanitizer does not see, so without this it reports every access to a
/// guarded value as a race, and a run cannot vouch for any state behind a lock.
///
/// Inlinable, so each caller's module specializes it for its own `Value`: unspecialized, every
/// hold looked up `Mutex<Value>`'s generic metadata at run time (about 480 instructions, eight
/// times per Retrieve in the daemon).
public final class Locked<Value: ~Copyable>: Sendable {
    @usableFromInline let mutex: Mutex<Value>

    @inlinable public init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    @inlinable public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let address = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            ThreadSanitizerHooks.acquire(address)
            defer { ThreadSanitizerHooks.release(address) }
            return try body(&value)
        }
    }
}

/// ThreadSanitizer's annotations, when its runtime is in the process.
@usableFromInline enum ThreadSanitizerHooks {
    @usableFromInline typealias Hook = @convention(c) (UnsafeRawPointer?) -> Void

    @usableFromInline static let hooks: (acquire: Hook, release: Hook)? = {
        // RTLD_DEFAULT: every object loaded, the executable first (the runtime is linked into it).
        guard let acquire = dlsym(nil, "__tsan_acquire"), let release = dlsym(nil, "__tsan_release") else { return nil }
        return (unsafeBitCast(acquire, to: Hook.self), unsafeBitCast(release, to: Hook.self))
    }()

    @inlinable static func acquire(_ address: UnsafeRawPointer) { hooks?.acquire(address) }
    @inlinable static func release(_ address: UnsafeRawPointer) { hooks?.release(address) }
}
