import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Catches code that closes a descriptor number it no longer owns: while `body` runs, another
/// thread keeps opening pipes (which take the lowest free numbers, as any thread's next `open` or
/// `socket` does), passes a byte through each and closes it. A pipe closed under that thread shows as
/// a failed write, read or close; the count of such pipes is returned (0 when `body` closed only its own).
///
/// ```swift
/// let stolen = try DescriptorThief.pipesClosedUnderAnotherThread {
///     for _ in 0..<50_000 { _ = try? WireConnection(path: missing) }
/// }
/// #expect(stolen == 0)
/// ```
public enum DescriptorThief {
    public static func pipesClosedUnderAnotherThread(while body: () throws -> Void) throws -> Int {
        signal(SIGPIPE, SIG_IGN)   // a write to a pipe whose read end was closed under it fails, and is counted
        let running = Atomic<Bool>(true)
        let closedUnder = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            defer { done.signal() }
            var rounds = 0
            while running.load(ordering: .relaxed) || rounds < 1000 {
                rounds += 1
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { continue }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                var byte: UInt8 = 7
                let wrote = write(ends[1], &byte, 1)
                // Read only what poll says is there: a number closed under this thread and taken by
                // another's socket or file could otherwise block the read, and the test with it.
                var ready = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
                let read = poll(&ready, 1, 0) == 1 && ready.revents & Int16(POLLIN) != 0 ? Glibc.read(ends[0], &byte, 1) : -1
                let closedRead = close(ends[0]), closedWrite = close(ends[1])
                if wrote != 1 || read != 1 || closedRead != 0 || closedWrite != 0 {
                    closedUnder.add(1, ordering: .relaxed)
                }
            }
        }.start()
        let outcome = Result { try body() }
        running.store(false, ordering: .relaxed)
        done.wait()
        try outcome.get()
        return closedUnder.load(ordering: .relaxed)
    }
}
