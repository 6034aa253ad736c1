import VaultCrypto
import Foundation
import Synchronization
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Concurrent unlocks cannot bypass the throttle, and one client's failures never lock the
    /// owner out.
    @Suite struct UnlockThrottleTests {
        /// What one passphrase check costs at the `interactive` cost (Argon2id's 64 MiB).
        static let derivationKiB = 64 * 1024

        @Test func sixtyFourParallelWrongUnlocksDeriveOnceAndAnotherProcessStillUnlocks() throws {
            let cli = try CLIHarness(autostart: false)
            // A real cost (interactive: 64 MiB per derivation), so parallel derivations would show in memory.
            let created = try cli.run(["init", "--key-source", "passphrase", "--passphrase-fd", "0", "--kdf-cost", "interactive"],
                                      input: Data("right passphrase\n".utf8))
            #expect(created.status == 0, "\(created.stderr)")
            _ = cli.manualClock()  // the daemon's time stands still: every call falls in one throttle window
            // 64 connections from this one process: above the default per-process connection limit (32),
            // which is not what this test is about.
            try cli.writePolicy(settings: """
                max_connections_per_uid = 128
                max_connections_per_process = 100
                max_connections_per_executable = 100
                """)
            try cli.startDaemon(extraArguments: ["--unsafe-clock-file", cli.clockFile])
            let pid = try #require(cli.daemon?.pid)
            let before = try #require(ProcessStatus(pid: pid))

            let connections = try (0..<64).map { _ in try VarlinkConnection(unixSocketPath: cli.socket, timeout: .seconds(60)) }
            let replies = Locked<[String]>([])
            let start = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            for connection in connections {
                done.enter()
                Thread {
                    start.wait()
                    var name = "answered"
                    do {
                        _ = try connection.call("org.sortedvault.vault.Unlock", ["passphrase": .string(base64("guess"))])
                    } catch let error as VarlinkError {
                        name = error.name
                    } catch {
                        name = "\(error)"
                    }
                    replies.withLock { $0.append(name) }
                    done.leave()
                }.start()
            }
            for _ in connections { start.signal() }
            #expect(done.wait(timeout: .now() + 120) == .success, "the unlock calls did not all get an answer")
            let names = replies.withLock { $0 }
            let derived = names.filter { $0 == "org.sortedvault.vault.WrongPassphrase" }.count
            let refused = names.filter { $0 == "org.sortedvault.vault.TooManyAttempts" }.count
            #expect(derived <= 1, "\(derived) passphrase checks ran in one throttle window")
            #expect(derived + refused == 64, "unexpected replies: \(Set(names))")
            // From the resident memory before to the peak after: one derivation adds its 64 MiB, two
            // at once would add 128. (The peak before is the start-up's, which would hide 20 MiB.)
            let after = try #require(ProcessStatus(pid: pid))
            let growth = after.peakResidentKiB - before.residentKiB
            #expect(growth < Self.derivationKiB * 3 / 2,
                    "the daemon's memory peaked \(growth / 1024) MiB above where it was: more than one 64 MiB derivation at once")

            // The same client is still throttled…
            #expect(throws: VarlinkError.self) { _ = try connections[0].call("org.sortedvault.vault.Unlock", ["passphrase": .string(base64("right passphrase"))]) }
            connections.forEach { $0.close() }
            // …but another process, the owner's CLI, unlocks at once.
            let owner = try cli.run(["unlock", "--passphrase-fd", "0"], input: Data("right passphrase\n".utf8))
            #expect(owner.status == 0, "the owner was locked out: \(owner.stderr)")
            #expect(try cli.run(["status"]).text.contains("vault: unlocked"))
            cli.stopDaemon()
        }
    }
}
