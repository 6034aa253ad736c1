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
    /// is asserted; a hang guard fails a waiter that is never woken. The negative control: before
    /// the row under test changes, a commit to another row wakes that row's waiter and not this
    /// one, so a hint that fires at once, or for any row, fails.
    @Suite struct ChangeHintTests {
        static let item = try! ItemKey(service: "com.sorted.api", account: "ada")
        static let other = try! ItemKey(service: "com.sorted.api", account: "grace")

        @Test func aWaiterOnOneStoreWakesWhenAnotherStoreCommits() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withListeningStore(master: master) { b in
                    try await Self.storeSeen(by: b, a, Self.item, 1)
                    // Stored, deleted, stored again: each commit wakes a waiter subscribed before it.
                    for step in 0..<3 {
                        let woken = try await Self.itemAndOther(b)
                        defer { woken.cancel() }
                        try await a.store(SecureBytes(copying: [UInt8(step)]), for: Self.other, options: .none)
                        #expect(try await woken.wait(for: 1) == ["other"], "step \(step): woken before its row changed")
                        switch step {
                        case 0: try await a.store(SecureBytes(copying: [2]), for: Self.item, options: .none)
                        case 1: try await a.delete(Self.item)
                        default: try await a.store(SecureBytes(copying: [3]), for: Self.item, options: .none)
                        }
                        #expect(try await woken.wait(for: 2) == ["other", "item"], "step \(step): no hint")
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
                    try await Self.storeSeen(by: b, a, Self.item, 1)
                    guard case .granted(let lease, _) = try await a.claimRefresh(of: Self.item, owner: "a", duration: 60) else {
                        Issue.record("the claim was not granted")
                        return
                    }
                    let woken = try await Self.itemAndOther(b)
                    defer { woken.cancel() }
                    try await a.store(SecureBytes(copying: [1]), for: Self.other, options: .none)
                    #expect(try await woken.wait(for: 1) == ["other"], "woken before the lease was released")
                    try await a.release(lease, answerLost: false)
                    #expect(try await woken.wait(for: 2) == ["other", "item"])
                }
            }
        }

        /// Stores `byte` as `item` through `a` and waits until `b` has been told, so that hint is
        /// not taken later for another change's.
        static func storeSeen(by b: PostgresTokenStore, _ a: PostgresTokenStore, _ item: ItemKey, _ byte: UInt8) async throws {
            let hints = try #require(await b.changes(of: item))
            try await a.store(SecureBytes(copying: [byte]), for: item, options: .none)
            #expect(try await hangGuard { await hints.first { _ in true } } != nil, "no hint for the first store")
        }

        /// Waiters on ``item`` and, for the negative control, ``other``.
        static func itemAndOther(_ b: PostgresTokenStore) async throws -> WakeOrder {
            WakeOrder(["item": try #require(await b.changes(of: item)), "other": try #require(await b.changes(of: other))])
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

/// Fails, instead of hanging the suite, when `operation` has not finished after `seconds`; an
/// operation that ignores cancellation is abandoned, not awaited (``withHangGuard(limit:_:_:)``).
func hangGuard<T: Sendable>(seconds: Int = 600, _ what: @autoclosure () -> String = "an operation", _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withHangGuard(limit: .seconds(seconds), "\(what()) (a \(seconds) s hang guard)", operation)
}
