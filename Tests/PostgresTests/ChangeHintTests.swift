import Foundation
import PostgresNIO
import Testing
import TestSupport
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// `changes(of:)` through LISTEN/NOTIFY: a waiter on one store (one daemon) wakes when another
    /// commits, and every waiter looks again after the listening connection comes back. No timing
    /// is asserted; a hang guard fails a waiter that is never woken.
    @Suite struct ChangeHintTests {
        static let item = try! ItemKey(service: "com.sorted.api", account: "ada")

        @Test func aWaiterOnOneStoreWakesWhenAnotherStoreCommits() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withListeningStore(master: master) { b in
                    try await a.store(SecureBytes(copying: [1]), for: Self.item, options: .none)
                    // Stored, deleted, stored again: each commit wakes a waiter subscribed before it.
                    for step in 0..<3 {
                        let hints = try #require(await b.changes(of: Self.item))
                        switch step {
                        case 0: try await a.store(SecureBytes(copying: [2]), for: Self.item, options: .none)
                        case 1: try await a.delete(Self.item)
                        default: try await a.store(SecureBytes(copying: [3]), for: Self.item, options: .none)
                        }
                        #expect(try await hangGuard { await hints.first { _ in true } } != nil, "step \(step): no hint")
                    }
                    #expect(b.changeHintConnections == 1)
                }
            }
        }

        @Test func aReleasedLeaseWakesTheWaiters() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withListeningStore(master: master) { b in
                    try await a.store(SecureBytes(copying: [1]), for: Self.item, options: .none)
                    guard case .granted(let lease, _) = try await a.claimRefresh(of: Self.item, owner: "a", duration: 60) else {
                        Issue.record("the claim was not granted")
                        return
                    }
                    let hints = try #require(await b.changes(of: Self.item))
                    try await a.release(lease, answerLost: false)
                    #expect(try await hangGuard { await hints.first { _ in true } } != nil)
                }
            }
        }

        @Test func everyWaiterLooksAgainAfterTheListeningConnectionIsKilledAndComesBack() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withListeningStore(master: master) { b in
                    let hints = try #require(await b.changes(of: Self.item))
                    let killed = try await database.sql("""
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = \(database.name) AND application_name = 'sortedvault-listen'
                        """)
                    #expect(killed.count == 1)
                    // Nothing was written: the reconnection alone wakes the waiter.
                    #expect(try await hangGuard { await hints.first { _ in true } } != nil)
                    #expect(b.changeHintConnections == 2)
                    // And the new connection listens.
                    let again = try #require(await b.changes(of: Self.item))
                    try await a.store(SecureBytes(copying: [4]), for: Self.item, options: .none)
                    #expect(try await hangGuard { await again.first { _ in true } } != nil)
                }
            }
        }
    }
}

extension FleetDatabase {
    /// ``withStore(master:clock:settings:deadlineClock:_:)`` with its change hints listening, and
    /// `body` run only once the listening connection is up.
    func withListeningStore<T: Sendable>(master: SecureBytes, _ body: (PostgresTokenStore) async throws -> T) async throws -> T {
        try await withStore(master: master) { store in
            let configuration = try settings.listenConfiguration()
            let listener = Task { await store.listenForChanges(configuration) }
            defer { listener.cancel() }
            try await hangGuard {
                while store.changeHintConnections == 0 { try await Task.sleep(for: .milliseconds(10)) }
            }
            return try await body(store)
        }
    }
}

/// Fails, instead of hanging the suite, when `operation` has not finished after `seconds`.
func hangGuard<T: Sendable>(seconds: Int = 60, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw HarnessError("not finished after \(seconds) s")
        }
        return result
    }
}
