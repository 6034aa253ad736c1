#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a new detached POSIX thread: for the few blocking waits (`poll`, a backstop's
/// sleep) that must not hold a thread of Swift's cooperative pool. What `Thread { … }.start()`
/// gave, without full Foundation in the program.
///
/// ```swift
/// await withCheckedContinuation { continuation in
///     DetachedThread.start { continuation.resume(returning: blockingWait()) }
/// }
/// ```
public enum DetachedThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts the thread; when the system cannot make one, runs `body` on the caller's thread.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let made = pthread_create(&thread, nil, { argument in
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if made == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
        }
    }
}
