import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// A holder whose lease ran out and was taken over cannot store its late answer: its tokens are
/// revoked, as those of an answer after a logout are.
@Suite(.timeLimit(.minutes(20))) struct FencedCommitTests {
    @Test func aLateAnswerAfterTheLeaseWasTakenOverIsRevokedNotStored() async throws {
        let fleet = FleetSimulation()
        let gateA = Gate(), gateB = Gate()
        let providerA = CountingProvider(gates: [0: gateA])
        let providerB = CountingProvider(gates: [0: gateB], answers: [0: .tokens(access: "A3", refresh: "R3")])
        let a = try fleet.manager(transport: providerA.transport), b = try fleet.manager(transport: providerB.transport)
        try await fleet.signIn(a)
        fleet.clock.advance(by: 3601)

        let lateHolder = Task { try await a.autoLogin(FleetSimulation.key) }
        await providerA.transport.waitForRequests(1)
        // a's lease (30 s) runs out while its request is out; b takes the login over.
        fleet.clock.advance(by: 31)
        let taker = Task { try await b.autoLogin(FleetSimulation.key) }
        await providerB.transport.waitForRequests(1)

        // a's answer comes while b's lease is live: the store still holds R1, but the write is fenced.
        await gateA.open()
        let revocationsSent = try await finishes(within: 600) { await providerA.transport.waitForRequests(3) }
        #expect(revocationsSent != nil && providerA.revoked == ["R2", "A2"], "the late answer's tokens were not revoked")
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R1", "the late answer was stored")

        await gateB.open()
        let taken = try await taker.value
        #expect(taken.outcome == "refreshed" && taken.accessToken == "A3", "\(taken)")
        // a's callers wait for b's result instead of asking again.
        let late = try await lateHolder.value
        #expect(late.outcome == "valid" && late.accessToken == "A3", "\(late)")
        #expect(providerA.refreshTokensSent == ["R1"])
        #expect(providerB.refreshTokensSent == ["R1"])
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R3")
        #expect(try await fleet.memory.list(service: SessionItems.revocationService).isEmpty)
    }

    @Test func theStoreRefusesAWriteUnderALeaseThatWasClaimedAgain() async throws {
        let clock = ManualClock()
        let leases = LocalLoginLeases(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
        let item = try ItemKey(service: "login", account: "ada")
        try await leases.store(secure("signed in"), for: item, options: .none)   // a lease is on a stored login
        guard case .granted(let first, 0) = try await leases.claimRefresh(of: item, owner: "a", duration: 30) else {
            Issue.record("the first claim was not granted"); return
        }
        #expect(try await leases.claimRefresh(of: item, owner: "b", duration: 30) == .held(owner: "a", until: first.expiresAt))
        #expect(try await leases.recordRequest(under: first))   // a's request goes out, and its answer never comes
        clock.advance(by: 30)
        guard case .granted(let second, 1) = try await leases.claimRefresh(of: item, owner: "b", duration: 30) else {
            Issue.record("the claim after expiry was not granted, or did not count the unresolved holder"); return
        }
        #expect(second.generation > first.generation)
        #expect(try await leases.store(secure("late"), for: item, options: .none, holding: first) == false)
        #expect(text(try await leases.retrieve(item).secret) == "signed in")
        #expect(try await leases.store(secure("fresh"), for: item, options: .none, holding: second))
        #expect(text(try await leases.retrieve(item).secret) == "fresh")
        guard case .granted(_, 0) = try await leases.claimRefresh(of: item, owner: "a", duration: 30) else {
            Issue.record("a stored refresh did not clear the doubt"); return
        }
    }
}
