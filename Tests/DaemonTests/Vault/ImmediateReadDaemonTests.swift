import Foundation
import GRDB
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// The immediate reads and group commit through the real daemon: a read never waits behind a
    /// write, and kill -9 in the middle of many concurrent stores loses only unacknowledged ones.
    @Suite struct ImmediateReadDaemonTests {
        @Test func aRetrieveIsAnsweredWhileAStoreWaitsForTheDatabase() async throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            let client = VaultClient(socketPath: cli.socket, timeout: .seconds(30))
            try await client.store(SecureBytes(copying: Array("token".utf8)), service: "read", account: "ada")

            // Another process holds the write lock, as a slow fsync would hold up the daemon's writer.
            var holding = Configuration()
            holding.allowsUnsafeTransactions = true  // the transaction stays open across accesses, on purpose
            let holder = try DatabaseQueue(path: cli.database, configuration: holding)
            defer { try? holder.close() }
            try holder.inDatabase { try $0.execute(sql: "BEGIN IMMEDIATE") }
            let writer = VaultClient(socketPath: cli.socket, timeout: .seconds(30))
            let storeDone = Finished()
            let store = Task.detached {
                defer { storeDone.set() }
                try await writer.store(SecureBytes(copying: Array("new".utf8)), service: "write", account: "bob")
            }
            usleep(200_000)  // let the store reach the database (ordering only: the checks below do not depend on it)

            let item = try await client.retrieve(service: "read", account: "ada")
            #expect(item.secret.constantTimeEquals(Array("token".utf8)))
            #expect(try await client.list(service: "read").map(\.account) == ["ada"])
            // The store is still waiting for the lock this test holds: the reads did not queue behind it.
            #expect(!storeDone.isSet, "the store finished before the lock was released")
            try holder.inDatabase { try $0.execute(sql: "ROLLBACK") }
            try await store.value
            #expect(try await client.retrieve(service: "write", account: "bob").secret.constantTimeEquals(Array("new".utf8)))
        }

        /// Retrieve, List and Status of an unlocked vault are answered on the event loop, without a
        /// task: the daemon's debug log names every call it hands to a task ("Call"), and names none
        /// of them. While locked, Status goes to a task (the locked count is the async path's), which
        /// shows the log does name task calls.
        @Test func retrieveListAndStatusOfAnUnlockedVaultAreAnsweredWithoutATask() async throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initPassphraseVault("pw")
            try cli.startDaemon(extraArguments: ["--log-level", "debug"])
            defer { cli.stopDaemon() }
            let client = VaultClient(socketPath: cli.socket, timeout: .seconds(30))
            let statusInTask = { cli.daemonOutput().split(separator: "\n").filter { $0.contains("org.sortedvault.vault.Status") && $0.contains("Call") }.count }

            #expect(try await client.status().locked)
            #expect(statusInTask() == 1, "a locked Status was not handed to a task: \(cli.daemonOutput())")
            try await client.unlock(passphrase: SecureBytes(copying: Array("pw".utf8)))
            try await client.store(SecureBytes(copying: Array("token".utf8)), service: "s", account: "ada")
            for _ in 0..<3 {
                let status = try await client.status()
                #expect(!status.locked && status.items == 1)
                #expect(try await client.retrieve(service: "s", account: "ada").secret.constantTimeEquals(Array("token".utf8)))
                #expect(try await client.list(service: "s").map(\.account) == ["ada"])
            }
            let output = cli.daemonOutput()
            #expect(statusInTask() == 1, "an unlocked Status was handed to a task: \(output)")
            for method in ["Retrieve", "List"] {
                #expect(!output.split(separator: "\n").contains { $0.contains("org.sortedvault.vault.\(method)") && $0.contains("Call") },
                        "\(method) was handed to a task: \(output)")
            }
        }

        /// kill -9 while 16 clients store at once (so stores commit in groups): every acknowledged
        /// store survives and opens, and the vault-wide state verifies at the next start.
        @Test func everyAcknowledgedConcurrentStoreSurvivesKill9s() async throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            var acknowledged: [(String, [UInt8])] = []
            for round in 0..<15 {
                try cli.startDaemon()
                let stored = AcknowledgedCount()
                let writers = (0..<16).map { writer in
                    Task.detached { () -> [(String, [UInt8])] in
                        let client = VaultClient(socketPath: cli.socket, timeout: .seconds(5))
                        var done: [(String, [UInt8])] = []
                        for i in 0..<10_000 {
                            let account = "r\(round)-w\(writer)-\(i)"
                            let secret = SecureRandom.bytes(count: 64)
                            do {
                                try await client.store(SecureBytes(copying: secret), service: "crash", account: account)
                                done.append((account, secret))
                                stored.add()
                            } catch {
                                break  // the daemon died mid-request: this store was not acknowledged
                            }
                        }
                        return done
                    }
                }
                // The kill comes once the round has stored a random number of items, however
                // slowly the machine runs, so every round kills the daemon amid group commits.
                let goal = Int.random(in: 10...120)
                #expect(CLIHarness.eventually { stored.value >= goal }, "round \(round) stored only \(stored.value) items")
                cli.killDaemon()
                for writer in writers { acknowledged += await writer.value }
            }
            #expect(acknowledged.count > 100, "too few stores were acknowledged to mean anything")

            let queue = try DatabaseQueue(path: cli.database)
            #expect(try await queue.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
            try queue.close()
            try cli.startDaemon()  // unlocks: the state's tag is checked against every row
            let client = VaultClient(socketPath: cli.socket)
            for (account, secret) in acknowledged {
                let item = try await client.retrieve(service: "crash", account: account)
                #expect(item.secret.constantTimeEquals(secret), "acknowledged store \(account) came back different")
            }
            #expect(try await client.list(service: "crash").count >= acknowledged.count)
            cli.stopDaemon()
        }
    }
}

/// A flag a task sets when it ends.
private final class Finished: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// How many stores a round's writers have had acknowledged so far.
final class AcknowledgedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
