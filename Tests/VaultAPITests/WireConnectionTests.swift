import Foundation
import Testing
import TestSupport
import VaultAPI

#if canImport(Glibc)
import Glibc
#endif

/// `WireConnection` in a process with other threads: what it opens and closes is its own alone.
@Suite(.timeLimit(.minutes(10))) struct WireConnectionTests {
    /// A connect that fails closes its socket once. Closed a second time (a class's `deinit` runs
    /// after its init throws, once every stored property is set), the number may by then be another
    /// thread's: that thread's pipe or socket was closed under it, and its next use failed with
    /// EBADF ("cannot start …: Bad file descriptor"), or a NIO channel stopped on an `unacceptable errno`.
    @Test func aFailedConnectNeverClosesAnotherThreadsDescriptor() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wire-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = directory + "/no-daemon-here"
        var otherFailures: [Int32: Int] = [:]
        let closedUnder = try DescriptorThief.pipesClosedUnderAnotherThread {
            for _ in 0..<50_000 {
                do {
                    _ = try WireConnection(path: missing, timeoutSeconds: 1)
                } catch let error as ConnectFailure {
                    guard case .unreachable(let code) = error else { otherFailures[-1, default: 0] += 1; continue }
                    if code != ENOENT { otherFailures[code, default: 0] += 1 }
                }
            }
        }
        #expect(closedUnder == 0, "another thread's pipe was closed under it")
        #expect(otherFailures.isEmpty, "connects failed with errno values other than ENOENT (count by errno; -1: not unreachable): \(otherFailures)")
    }
}
