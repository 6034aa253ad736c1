import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultTesting

/// The outbox guarantees of the in-process outbox, by the same suite the fleet store runs.
@Suite(.timeLimit(.minutes(20))) struct RevocationOutboxConformanceTests {
    @Test("the in-process outbox keeps the outbox guarantees", arguments: RevocationOutboxConformance.cases)
    func localOutboxConforms(_ check: RevocationOutboxConformance.Case) async throws {
        let clock = ManualClock()
        let outbox = LocalRevocationOutbox(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
        try await check.run(.init(a: outbox, b: outbox, shortClaim: 1) { clock.advance(by: $0) })
    }

    /// The store cannot wipe and queue in one step: an entry written before a crash is read back at
    /// start-up by a new outbox over the same store, and is due at once.
    @Test func aNewOutboxOverTheSameStoreFindsTheEntriesOfTheLastRun() async throws {
        let clock = ManualClock()
        let memory = InMemoryTokenStore(clock: clock)
        let login = try ItemKey(service: "sortedvault/session/login", account: "ada")
        try await memory.store(SecureBytes(copying: [1]), for: login, options: StoreOptions())
        _ = try await LocalRevocationOutbox(wrapping: memory, clock: clock).enqueueRevocation(
            SecureBytes(copying: Array("revoke".utf8)), for: login, wiping: false, holdFor: 600, discardAfter: clock.now.addingTimeInterval(3600))

        let restarted = LocalRevocationOutbox(wrapping: memory, clock: clock)
        clock.advance(by: 5)
        let found = try await restarted.revocationsToReconcile()
        #expect(found.count == 1)
        #expect(try await restarted.revocationBacklog(stuckAfter: 1) == RevocationBacklog(pending: 1, stuck: 0, oldestAge: 5))
        let claimed = try await restarted.claimDueRevocations(limit: 10, for: 60)
        #expect(claimed.map(\.id) == found.map(\.id))
        #expect(claimed.first?.payload.constantTimeEquals(Array("revoke".utf8)) == true)
    }

    /// An entry whose tokens are dead anyway (past `discardAfter`) goes without a delivery.
    @Test func anEntryPastItsDiscardDateIsNotClaimed() async throws {
        let clock = ManualClock()
        let outbox = LocalRevocationOutbox(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
        let login = try ItemKey(service: "sortedvault/session/login", account: "ada")
        _ = try await outbox.enqueueRevocation(SecureBytes(copying: [1]), for: login, wiping: true, holdFor: 0,
                                               discardAfter: clock.now.addingTimeInterval(60))
        clock.advance(by: 61)
        #expect(try await outbox.claimDueRevocations(limit: 10, for: 60).isEmpty)
        #expect(try await outbox.revocationBacklog(stuckAfter: 1).pending == 0)
    }
}
