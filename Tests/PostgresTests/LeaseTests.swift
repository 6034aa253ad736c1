import Foundation
import PostgresNIO
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// The ``LoginLeases`` guarantees on a real PostgreSQL, with two store instances (two pools) as
    /// two daemons of one fleet. Leases run out on the database's clock: the tests use short leases
    /// and ask the database whether its clock has passed them, never a bound on the test's time.
    @Suite struct LeaseTests {
        let item: ItemKey

        init() throws { item = try ItemKey(service: "login", account: "ada") }

        @Test func aClaimWhileHeldSaysWhoHoldsItUntilWhen() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withStore(master: master) { b in
                    try await a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                    let lease = try granted(await a.claimRefresh(of: item, owner: "daemon-a", duration: 600))
                    #expect(lease.lost == 0)
                    #expect(try await b.claimRefresh(of: item, owner: "daemon-b", duration: 600)
                            == .held(owner: "daemon-a", until: lease.lease.expiresAt))
                    #expect(try await a.claimRefresh(of: item, owner: "daemon-a", duration: 600)
                            == .held(owner: "daemon-a", until: lease.lease.expiresAt))
                }
            }
        }

        @Test func concurrentClaimsFromTwoDaemonsGrantExactlyOne() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withStore(master: master) { b in
                    try await a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                    let claims = try await withThrowingTaskGroup(of: LeaseClaim.self) { group in
                        for index in 0..<16 {
                            let store = index.isMultiple(of: 2) ? a : b
                            group.addTask { try await store.claimRefresh(of: item, owner: "claimer-\(index)", duration: 600) }
                        }
                        return try await group.reduce(into: [LeaseClaim]()) { $0.append($1) }
                    }
                    let grants = claims.compactMap { claim -> RefreshLease? in
                        if case .granted(let lease, _) = claim { return lease } else { return nil }
                    }
                    #expect(grants.count == 1)
                    #expect(claims.allSatisfy { claim in
                        if case .held(let owner, _) = claim { return owner == grants.first?.owner } else { return true }
                    })
                }
            }
        }

        @Test func aLateHolderIsFencedAndWritesNothing() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withStore(master: master) { b in
                    try await a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                    let first = try granted(await a.claimRefresh(of: item, owner: "daemon-a", duration: 0.2))
                    try await database.waitUntilPast(first.lease.expiresAt)
                    // A's answer never came back: B takes over and is told one answer is unknown.
                    let second = try granted(await b.claimRefresh(of: item, owner: "daemon-b", duration: 600))
                    #expect(second.lease.generation > first.lease.generation)
                    #expect(second.lost == 1)
                    #expect(try await a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: first.lease) == false)
                    #expect(try await b.retrieve(item).secret.constantTimeEquals([1]))
                    try await a.release(first.lease, answerLost: true)   // fenced: does nothing
                    #expect(try await b.store(SecureBytes(copying: [3]), for: item, options: StoreOptions(), holding: second.lease))
                    #expect(try await a.retrieve(item).secret.constantTimeEquals([3]))
                    // The write ended the lease and the doubt: the next claim is free and starts from 0.
                    #expect(try granted(await a.claimRefresh(of: item, owner: "daemon-a", duration: 600)).lost == 0)
                }
            }
        }

        @Test func anExpiredButUnclaimedLeaseMayStillCommit() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { a in
                try await a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                let lease = try granted(await a.claimRefresh(of: item, owner: "daemon-a", duration: 0.2)).lease
                try await database.waitUntilPast(lease.expiresAt)
                #expect(try await a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: lease))
                #expect(try await a.retrieve(item).secret.constantTimeEquals([2]))
                // A lease once used fences its holder's second write.
                #expect(try await a.store(SecureBytes(copying: [3]), for: item, options: StoreOptions(), holding: lease) == false)
            }
        }

        @Test func aPlainStoreOrADeleteFencesTheHolder() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withStore(master: master) { b in
                    try await a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                    let lease = try granted(await a.claimRefresh(of: item, owner: "daemon-a", duration: 600)).lease
                    try await b.store(SecureBytes(copying: [5]), for: item, options: StoreOptions())   // a new sign-in
                    #expect(try await a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: lease) == false)
                    #expect(try await b.retrieve(item).secret.constantTimeEquals([5]))
                    // The plain store ended the lease: a claim is granted at once, with no doubt.
                    let next = try granted(await b.claimRefresh(of: item, owner: "daemon-b", duration: 600))
                    #expect(next.lost == 0)
                    try await a.delete(item)   // a logout
                    #expect(try await b.store(SecureBytes(copying: [3]), for: item, options: StoreOptions(), holding: next.lease) == false)
                    await expectError(.notFound) { try await b.retrieve(item) }
                    // Signed in again: the row starts without a lease, and the old holder stays fenced.
                    try await a.store(SecureBytes(copying: [4]), for: item, options: StoreOptions())
                    #expect(try await b.store(SecureBytes(copying: [6]), for: item, options: StoreOptions(), holding: next.lease) == false)
                    #expect(try await a.retrieve(item).secret.constantTimeEquals([4]))
                }
            }
        }

        @Test func releasesCountLostAnswersOneAfterAnother() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { a in
                try await a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                let first = try granted(await a.claimRefresh(of: item, owner: "a", duration: 600))
                try await a.release(first.lease, answerLost: true)
                let second = try granted(await a.claimRefresh(of: item, owner: "a", duration: 600))
                #expect(second.lost == 1)
                try await a.release(second.lease, answerLost: true)
                let third = try granted(await a.claimRefresh(of: item, owner: "a", duration: 600))
                #expect(third.lost == 2)
                // A released lease no longer writes.
                #expect(try await a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: second.lease) == false)
                try await a.release(third.lease, answerLost: false)   // a known answer: the doubt is gone
                #expect(try granted(await a.claimRefresh(of: item, owner: "a", duration: 600)).lost == 0)
            }
        }

        @Test func claimingAMissingLoginSaysNotFound() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { a in
                await expectError(.notFound) { try await a.claimRefresh(of: item, owner: "a", duration: 600) }
                await expectError(.invalidArgument) { try await a.claimRefresh(of: item, owner: "a", duration: 0) }
            }
        }

        private func granted(_ claim: LeaseClaim, sourceLocation: SourceLocation = #_sourceLocation) throws -> (lease: RefreshLease, lost: Int) {
            guard case .granted(let lease, let lost) = claim else {
                Issue.record("expected a granted lease, got \(claim)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            return (lease, lost)
        }
    }
}

extension FleetDatabase {
    /// Returns once the database's clock is past `date`; the hang guard only ends a broken run.
    func waitUntilPast(_ date: Date) async throws {
        for _ in 0..<1200 {
            let past = try await sql("SELECT clock_timestamp() > \(date)").first?.decode(Bool.self) ?? false
            if past { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the database's clock did not pass \(date) within the hang guard")
    }
}
