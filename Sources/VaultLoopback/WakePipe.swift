import Synchronization
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// A pipe whose read end becomes readable once ``wake()`` is called, from any thread (a task's
/// cancellation handler), until it is closed: the `wake` of ``ReadableWait``.
public final class WakePipe: Sendable {
    public let readEnd: Int32
    private let writeEnd: Mutex<Int32>

    public init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw VaultError(.unavailable, "no pipe to wake a wait with: \(String(cString: strerror(errno)))")
        }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        readEnd = fds[0]
        writeEnd = Mutex(fds[1])
    }

    public func wake() {
        writeEnd.withLock { fd in
            var byte: UInt8 = 1
            if fd >= 0 { _ = write(fd, &byte, 1) }
        }
    }

    /// Closes both ends; call it once no wait uses ``readEnd`` any more.
    public func close() {
        writeEnd.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
        Glibc.close(readEnd)
    }
}
