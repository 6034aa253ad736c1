import Foundation
import GRDB
import Testing
@testable import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

/// Group commit on real SQLite files: stores arriving together share one transaction, each is
/// acknowledged only once durable, and a failed transaction fails every store in it.
@Suite(.timeLimit(.minutes(20))) struct GroupCommitTests {
    static func generation(_ test: TestVault) throws -> Int64 {
        try test.tamper { try Int64.fetchOne($0, sql: "SELECT generation FROM vault_state") ?? -1 }
    }

    @Test func concurrentStoresAreAllDurableAndTheStateVerifiesAfterAReopen() async throws {
        let test = try await TestVault()
        let vault = test.vault
        let before = try Self.generation(test)
        // Another write holds the vault's write turn, so the first store waits in its transaction and
        // the other 63 arrive while it does, whatever the machine's speed.
        let (held, holding) = AsyncStream<Void>.makeStream()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await vault.withWriteTurn {
                holding.yield()
                for await _ in release {}
            }
        }
        for await _ in held { break }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                group.addTask { try await vault.store(secure("secret \(index)"), service: "s", account: "a\(index)") }
            }
            var waiting = 0
            for _ in 0..<6000 where waiting < 63 {
                waiting = await vault.pendingStores.count
                if waiting < 63 { try await Task.sleep(for: .milliseconds(10)) }
            }
            releasing.finish()
            try await holder.value
            try #require(waiting == 63, "only \(waiting) stores waited behind the first")
            try await group.waitForAll()
        }
        // The first store alone, then the 63 that arrived while it waited, in one transaction.
        let after = try Self.generation(test)
        #expect(after - before == 2, "64 stores took \(after - before) transactions")
        let (storage, reopened) = try await test.reopen()
        defer { try? storage.close() }
        try await reopened.unlock(.passphrase(secure(TestVault.passphrase)))  // checks the state's tag
        for index in 0..<64 {
            #expect(try await reopened.retrieve(service: "s", account: "a\(index)").secret.constantTimeEquals(Array("secret \(index)".utf8)))
        }
        #expect(try await reopened.list().count == 64)
    }

    @Test func concurrentStoresOfOneItemLeaveOneOfTheirValues() async throws {
        let test = try await TestVault()
        let vault = test.vault
        try await vault.store(secure("first"), service: "s", account: "a")
        let created = try await vault.retrieve(service: "s", account: "a").metadata.createdAt
        test.clock.advance(by: 10)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<32 {
                group.addTask { try await vault.store(secure("v\(index)"), service: "s", account: "a") }
                group.addTask { try await vault.store(secure("other \(index)"), service: "s", account: "b\(index)") }
            }
            try await group.waitForAll()
        }
        let item = try await vault.retrieve(service: "s", account: "a")
        #expect((0..<32).contains { item.secret.constantTimeEquals(Array("v\($0)".utf8)) })
        #expect(item.metadata.createdAt == created)
        #expect(try await vault.list().count == 33)
        let (storage, reopened) = try await test.reopen()
        defer { try? storage.close() }
        try await reopened.unlock(.passphrase(secure(TestVault.passphrase)))
        #expect(try await reopened.retrieve(service: "s", account: "a").secret.constantTimeEquals(item.secret.withUnsafeBytes { Array($0) }))
    }

    /// A leader whose caller is cancelled while it waits for the write turn still commits its
    /// group: the group is not its leader's alone.
    @Test func aCancelledLeaderStillCommitsItsGroupAndHandsTheLeadOn() async throws {
        let test = try await TestVault()
        let vault = test.vault
        let (held, holding) = AsyncStream<Void>.makeStream()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await vault.withWriteTurn {
                holding.yield()
                for await _ in release {}
            }
        }
        for await _ in held { break }
        let leader = Task { try await vault.store(secure("leader"), service: "s", account: "leader") }
        var waits = 0
        while !(await vault.groupCommitRunning), waits < 6000 {
            try await Task.sleep(for: .milliseconds(10))
            waits += 1
        }
        let others = (0..<3).map { index in
            Task { try await vault.store(secure("other \(index)"), service: "s", account: "o\(index)") }
        }
        while await vault.pendingStores.count < 3, waits < 6000 {
            try await Task.sleep(for: .milliseconds(10))
            waits += 1
        }
        try #require(await vault.pendingStores.count == 3)
        leader.cancel()
        releasing.finish()
        try await holder.value
        try await leader.value
        for other in others { try await other.value }
        #expect(try await vault.list().map(\.account) == ["leader", "o0", "o1", "o2"])
    }

    @Test func aStoreIsAcknowledgedExactlyWhenItIsDurable() async throws {
        let test = try await TestVault()
        let vault = test.vault
        // Any transaction that writes a large secret fails, as a full disk would fail it.
        try test.tamper { db in
            try db.execute(sql: "CREATE TRIGGER poison BEFORE INSERT ON items WHEN length(NEW.secret) > 2000 BEGIN SELECT RAISE(ABORT, 'poisoned'); END")
        }
        let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<48 {
                group.addTask {
                    let secret = index % 8 == 3 ? String(repeating: "x", count: 4000) : "small \(index)"
                    do {
                        try await vault.store(secure(secret), service: "s", account: "a\(index)")
                        return (index, true)
                    } catch {
                        return (index, false)
                    }
                }
            }
            return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
        }
        for index in 0..<48 where index % 8 == 3 { #expect(outcomes[index] == false) }
        let (storage, reopened) = try await test.reopen()
        defer { try? storage.close() }
        try await reopened.unlock(.passphrase(secure(TestVault.passphrase)))
        for index in 0..<48 {
            let stored = await vaultErrorCode { try await reopened.retrieve(service: "s", account: "a\(index)") } == nil
            #expect(stored == outcomes[index], "store \(index): acknowledged \(outcomes[index]!), durable \(stored)")
        }
    }
}
