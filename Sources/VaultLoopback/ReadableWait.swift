#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// A blocking wait for a descriptor that another party can cut short: the CLI's signal pipe
/// (Ctrl-C), or the pipe an app's sign-in writes to when its `Task` is cancelled.
///
/// ```swift
/// switch ReadableWait.wait(for: listener, wake: interruptPipe, until: deadline) {
/// case .ready: accept()
/// case .interrupted: cleanUp()
/// case .timedOut: giveUp()
/// }
/// ```
///
/// It blocks its thread: never call it on Swift concurrency's shared threads.
public enum ReadableWait {
    public enum Result: Error, Sendable, Equatable {
        /// The descriptor (one of those waited for) that is readable.
        case ready(Int32)
        case interrupted, timedOut
    }

    /// Waits until `fd` is readable (`.ready`), `wake` is readable (`.interrupted`; -1: nothing
    /// wakes it) or `deadline` passed (`.timedOut`; nil: only `wake` ends the wait, for a caller
    /// that keeps its timeout on a clock of its own). A readable `wake` wins over a ready `fd`.
    public static func wait(for fd: Int32, wake: Int32, until deadline: ContinuousClock.Instant?) -> Result {
        wait(for: [fd], wake: wake, until: deadline)
    }

    /// ``wait(for:wake:until:)`` for the first of several descriptors to become readable.
    public static func wait(for fds: [Int32], wake: Int32, until deadline: ContinuousClock.Instant?) -> Result {
        while true {
            let left = deadline.map { ContinuousClock.now.duration(to: $0) } ?? .seconds(60)
            if left <= .zero { return .timedOut }
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            var polled = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)] + fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, nfds_t(polled.count), milliseconds)
            if ready < 0 && errno != EINTR { return .timedOut }
            if ready <= 0 { continue }
            if polled[0].revents != 0 { return .interrupted }
            if let readable = polled.dropFirst().first(where: { $0.revents != 0 }) { return .ready(readable.fd) }
        }
    }
}

extension ReadableWait {
    /// Runs `body`, a blocking wait, on a thread of its own, and hands it a `wake` descriptor that
    /// becomes readable when the calling task is cancelled: a ``wait(for:wake:until:)`` inside then
    /// answers `.interrupted`. Returns once `body` has.
    ///
    /// ```swift
    /// switch try await ReadableWait.cancellable({ wake in ReadableWait.wait(for: 0, wake: wake, until: deadline) }) {
    /// case .interrupted: throw CancellationError()
    /// …
    /// }
    /// ```
    public static func cancellable<T: Sendable>(_ body: @escaping @Sendable (_ wake: Int32) -> T) async throws -> T {
        let wake = try WakePipe()
        defer { wake.close() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DetachedThread.start { continuation.resume(returning: body(wake.readEnd)) }
            }
        } onCancel: {
            wake.wake()
        }
    }
}
