import Synchronization
import VaultLoopback

#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT and SIGTERM into a readable pipe, so that a command waiting in `poll` (a sign-in's
/// listener, a pasted line) wakes up, cleans up (closes its listener, cancels the daemon's flow)
/// and exits with the interrupted status, instead of dying where it stands.
enum InterruptWatch {
    /// The pipe's write end for the handler (-1 before ``install()``).
    private static let writeEnd = Atomic<Int32>(-1)
    /// The pipe's read end: readable once a signal arrived.
    nonisolated(unsafe) private(set) static var readEnd: Int32 = -1
    /// The signal that arrived first (0: none).
    static let received = Atomic<Int32>(0)

    static func install() {
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

    /// Waits until `fd` is readable, a signal arrived, or `deadline` passed: `.ready`,
    /// `.interrupted` or `.timedOut`.
    static func wait(for fd: Int32, until deadline: ContinuousClock.Instant) -> WaitResult {
        interrupted ? .interrupted : ReadableWait.wait(for: fd, wake: readEnd, until: deadline)
    }

    typealias WaitResult = ReadableWait.Result
}
