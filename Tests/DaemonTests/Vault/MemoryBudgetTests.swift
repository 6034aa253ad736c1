import Foundation
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Whatever one admitted client sends, the daemon's memory grows by a few MiB at most.
    @Suite struct MemoryBudgetTests {
        /// The bound this suite holds the daemon to, for everything the flooding connections send.
        static let boundKiB = 8 * 1024

        /// A frame of about 1 MiB that would cost some 13 MiB once parsed: half a million tiny values.
        static let costlyFrame: [UInt8] = {
            let head = Array(#"{"method":"org.sortedvault.vault.Status","parameters":{"padding":["#.utf8)
            let values = (1 << 20) / 2 - 64
            var bytes = head
            bytes.reserveCapacity(head.count + values * 2 + 8)
            for index in 0..<values { bytes += index == 0 ? [UInt8(ascii: "0")] : [UInt8(ascii: ","), UInt8(ascii: "0")] }
            return bytes + Array("]}}".utf8) + [0]
        }()

        /// A connection busy with a `Watch` that never ends: everything it sends next waits behind it.
        static func watchingConnection(_ cli: CLIHarness) throws -> RawSocket {
            let client = try RawSocket(path: cli.socket)
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            client.send(frame(#"{"method":"org.sortedvault.session.Watch","parameters":{},"more":true}"#))
            return client
        }

        @Test func pipelinedFramesAndANeverEndingFrameBehindASlowCallCostOnlyAFewMiB() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let pid = try #require(cli.daemon?.pid)
            for _ in 0..<20 { #expect(try cli.run(["status", "--no-autostart"]).status == 0) }
            let before = try #require(ProcessStatus(pid: pid))

            // 64 pipelined frames of 1 MiB behind a Watch.
            let pipeliner = try Self.watchingConnection(cli)
            var pipelined = 0
            while pipelined < 64, pipeliner.send(Self.costlyFrame) == Self.costlyFrame.count { pipelined += 1 }
            // Up to 600 MiB of one frame that never ends, behind another Watch.
            let endless = try Self.watchingConnection(cli)
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
            var endlessMiB = 0
            while endlessMiB < 600, endless.send(chunk) == chunk.count { endlessMiB += 1 }

            // Another client is served meanwhile.
            let other = try VarlinkConnection(unixSocketPath: cli.socket, timeout: .seconds(10))
            #expect(try other.call("org.sortedvault.vault.Status")["locked"] == .bool(false))
            other.close()

            // Anonymous memory now, while both connections still hold what they sent: the peak
            // (VmHWM) would hide growth below the start-up peak, before the code pages were unmapped.
            let after = try #require(ProcessStatus(pid: pid))
            let grownKiB = after.anonymousResidentKiB - before.anonymousResidentKiB
            #expect(grownKiB < Self.boundKiB,
                    "the daemon's anonymous memory grew by \(grownKiB) KiB (\(before.anonymousResidentKiB) → \(after.anonymousResidentKiB) KiB) taking \(pipelined) pipelined MiB and \(endlessMiB) MiB of one frame")
            _ = (pipeliner, endless)
        }
    }
}
