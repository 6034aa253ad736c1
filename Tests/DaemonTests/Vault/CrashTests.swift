import Foundation
import TestSupport
import GRDB
import Testing
import VaultClient
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// kill -9 in the middle of a stream of stores: every acknowledged store survives and opens.
    @Suite struct CrashTests {
        /// 100 rounds here; `scripts/crash-rounds N` runs N (SORTEDVAULT_CRASH_ROUNDS) for the figures.
        static let rounds = ProcessInfo.processInfo.environment["SORTEDVAULT_CRASH_ROUNDS"].flatMap(Int.init) ?? 100

        @Test func everyAcknowledgedStoreSurvives100Kill9s() async throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            var acknowledged: [(String, [UInt8])] = []
            for round in 0..<Self.rounds {
                try cli.startDaemon()
                let client = VaultClient(socketPath: cli.socket, timeout: .seconds(5))
                // The kill lands a random 5–40 ms into the stream, counted from the first acknowledged
                // store, so a loaded machine (slow daemon start) still kills mid-stream, not before it.
                let streaming = Gate()
                let writer = Task.detached { () -> [(String, [UInt8])] in
                    var done: [(String, [UInt8])] = []
                    for i in 0..<10_000 {
                        let account = "r\(round)-\(i)"
                        let secret = SecureRandom.bytes(count: 64)
                        do {
                            try await client.store(SecureBytes(copying: secret), service: "crash", account: account)
                            done.append((account, secret))
                            if i == 0 { streaming.open() }
                        } catch {
                            break  // the daemon died mid-request: this store was not acknowledged
                        }
                    }
                    streaming.open()
                    return done
                }
                streaming.wait(timeout: 10)
                usleep(UInt32.random(in: 5_000...40_000))
                cli.killDaemon()
                acknowledged += await writer.value
            }
            #expect(acknowledged.count > 100, "too few stores were acknowledged to mean anything")

            // The database passes its integrity check, and every acknowledged item opens.
            let queue = try DatabaseQueue(path: cli.database)
            #expect(try await queue.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
            try queue.close()
            try cli.startDaemon()
            let client = VaultClient(socketPath: cli.socket)
            var intact = 0
            for (account, secret) in acknowledged {
                let item = try await client.retrieve(service: "crash", account: account)
                #expect(item.secret.constantTimeEquals(secret), "acknowledged store \(account) came back different")
                if item.secret.constantTimeEquals(secret) { intact += 1 }
            }
            print("crash rounds: \(Self.rounds) kill -9s, \(acknowledged.count) acknowledged stores, \(intact) present and intact, integrity_check ok")
            cli.stopDaemon()
        }
    }
}

/// A one-shot signal between a writer task and the test's thread.
private final class Gate: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var isOpen = false

    func open() {
        lock.lock()
        defer { lock.unlock() }
        if !isOpen {
            isOpen = true
            semaphore.signal()
        }
    }

    func wait(timeout seconds: Double) {
        _ = semaphore.wait(timeout: .now() + seconds)
    }
}
