import Synchronization
import VaultCore
import VaultLoopback

#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT and SIGTERM into the cancellation of the command's task, so that a command waiting
/// (a sign-in's listener, a pasted line, a device sign-in's approval) ends its wait as a cancelled
/// task does, cleans up on the way out (closes its listener, cancels the daemon's flow) and exits
/// with the interrupted status, instead of dying where it stands.
///
/// ```swift
/// do {
///     try await InterruptWatch.cancellingOnSignal { try await signIn() }
/// } catch is CancellationError where InterruptWatch.interrupted {
///     throw ExitCode(InterruptWatch.exitStatus)
/// }
/// ```
enum InterruptWatch {
    /// The pipe's write end for the handler (-1 before ``install()``).
    private static let writeEnd = Atomic<Int32>(-1)
    /// The pipe's read end: readable once a signal arrived.
    nonisolated(unsafe) private static var readEnd: Int32 = -1
    /// The signal that arrived first (0: none).
    private static let received = Atomic<Int32>(0)

    private static func install() {
        guard readEnd < 0 else { return }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        readEnd = fds[0]
        writeEnd.store(fds[1], ordering: .sequentiallyConsistent)
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                _ = InterruptWatch.received.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent)
                var byte: UInt8 = 1
                _ = write(InterruptWatch.writeEnd.load(ordering: .sequentiallyConsistent), &byte, 1)
            }
        }
    }

    static var interrupted: Bool { received.load(ordering: .sequentiallyConsistent) != 0 }

    /// The exit status of a command ended by the signal: 128 + its number (130 for Ctrl-C).
    static var exitStatus: Int32 { 128 + received.load(ordering: .sequentiallyConsistent) }

    /// Runs `body` in a task that the first SIGINT or SIGTERM cancels, and returns or throws what it
    /// does (``interrupted`` tells a signal's `CancellationError` from another). A thread of its own
    /// waits for the signal; it has ended when this returns.
    static func cancellingOnSignal<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        install()
        let stop = try WakePipe()
        let task = Task { try await body() }
        let signalPipe = readEnd
        async let watched: Void = withCheckedContinuation { continuation in
            DetachedThread.start {
                if case .ready = ReadableWait.wait(for: signalPipe, wake: stop.readEnd, until: nil) { task.cancel() }
                continuation.resume()
            }
        }
        let result = await task.result
        stop.wake()
        await watched
        stop.close()
        return try result.get()
    }
}
