import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// The store (a fleet's database) goes away while the provider answers a refresh. The answer may
/// carry a rotated refresh token, and the old one is then dead at a strict provider: the answer
/// must be written once the store is back, not dropped.
@Suite(.timeLimit(.minutes(20))) struct StoreOutageRefreshTests {
    func world() throws -> (FleetSimulation, Outage, ScriptedOAuthTransport, SessionManager) {
        let fleet = FleetSimulation()
        let outage = Outage(inner: fleet.store)
        let transport = ScriptedOAuthTransport { _ in
            outage.isDown = true  // the database goes away while the provider answers
            return .tokens(access: "A2", refresh: "R2")
        }
        let manager = try SessionManager(store: outage, transport: transport, clock: fleet.clock, random: { 0.5 }, sleeper: fleet.sleeper)
        return (fleet, outage, transport, manager)
    }

    @Test func theBackgroundWorkWritesTheAnswerOnceTheStoreIsBack() async throws {
        let (fleet, outage, transport, manager) = try world()
        try await fleet.signIn(manager)
        fleet.clock.advance(by: 3601)
        _ = try? await manager.autoLogin(FleetSimulation.key)
        #expect(transport.requestCount == 1)
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R1", "the store was down: nothing written yet")
        let wake = try #require(manager.nextWakeUp())
        #expect(wake <= fleet.clock.now.addingTimeInterval(SessionManager.Configuration().leaseRecheck), "it tries again soon")

        outage.isDown = false
        await manager.runDueWork()
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R2")
        #expect(try await manager.autoLogin(FleetSimulation.key).accessToken == "A2")
        #expect(transport.requestCount == 1, "the rotated token was never sent again")
    }

    @Test func theNextCallerWritesTheAnswerOnceTheStoreIsBack() async throws {
        let (fleet, outage, transport, manager) = try world()
        try await fleet.signIn(manager)
        fleet.clock.advance(by: 3601)
        _ = try? await manager.autoLogin(FleetSimulation.key)
        outage.isDown = false
        #expect(try await manager.autoLogin(FleetSimulation.key).accessToken == "A2")
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R2")
        #expect(transport.requestCount == 1)
    }
}

/// The store goes away right after it grants a lease, before the holder could send anything, and
/// the holder cannot give the lease back: the lease runs out on its own. Nobody's answer is
/// unknown, so however often that happens, the next refresh asks the provider and the login stays.
/// (Each such lease used to count as a lost answer: the third claim ended the login, in doubt,
/// without a single request.)
@Suite(.timeLimit(.minutes(20))) struct StoreOutageBeforeTheRequestTests {
    @Test func leasesThatRanOutBeforeTheirRequestCostNoLostAnswer() async throws {
        let fleet = FleetSimulation()
        let outage = Outage(inner: fleet.store)
        let transport = ScriptedOAuthTransport { _ in .tokens(access: "A2", refresh: "R2") }
        let manager = try SessionManager(store: outage, transport: transport, clock: fleet.clock, random: { 0.5 }, sleeper: fleet.sleeper)
        try await fleet.signIn(manager)
        fleet.clock.advance(by: 3601)
        for round in 1...3 {
            outage.goesDownAfterTheNextClaim()
            let answer = try await manager.autoLogin(FleetSimulation.key)
            guard case .offline = answer else {
                Issue.record("round \(round): the store was down, yet the answer was \(answer)")
                return
            }
            #expect(outage.claims == round)
            outage.isDown = false
            fleet.clock.advance(by: SessionManager.Configuration().refreshLease + 1)   // the lease nobody gave back runs out
        }
        #expect(transport.requestCount == 0, "the store was down before every request")
        #expect(try await outage.loginsInDoubt() == 0)
        #expect(try await manager.autoLogin(FleetSimulation.key).accessToken == "A2")
        #expect(transport.requestCount == 1)
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R2")
    }
}

/// A lease store that fails every call with `.unavailable` while it is down.
final class Outage: DueRefreshes, Sendable {
    let inner: any DueRefreshes
    private struct State {
        var down = false
        var downAfterClaim = false
        var claims = 0
    }
    private let state = Locked(State())

    init(inner: any DueRefreshes) { self.inner = inner }

    var isDown: Bool {
        get { state.withLock { $0.down } }
        set { state.withLock { $0.down = newValue } }
    }

    /// Leases granted so far.
    var claims: Int { state.withLock { $0.claims } }

    /// The next granted claim takes the store down as it answers.
    func goesDownAfterTheNextClaim() { state.withLock { $0.downAfterClaim = true } }

    private func reach() throws {
        if isDown { throw VaultError(.unavailable, "the database did not answer") }
    }

    func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim {
        try reach()
        let claim = try await inner.claimRefresh(of: item, owner: owner, duration: duration)
        if case .granted = claim {
            state.withLock { state in
                state.claims += 1
                if state.downAfterClaim { (state.down, state.downAfterClaim) = (true, false) }
            }
        }
        return claim
    }
    func recordRequest(under lease: RefreshLease) async throws -> Bool { try reach(); return try await inner.recordRequest(under: lease) }
    func store(_ secret: SecureBytes, for item: ItemKey, options: StoreOptions, holding lease: RefreshLease) async throws -> Bool {
        try reach(); return try await inner.store(secret, for: item, options: options, holding: lease)
    }
    func release(_ lease: RefreshLease, answerLost: Bool) async throws { try reach(); try await inner.release(lease, answerLost: answerLost) }
    func changes(of item: ItemKey) async -> AsyncStream<Void>? { await inner.changes(of: item) }
    func loginsInDoubt() async throws -> Int { try reach(); return try await inner.loginsInDoubt() }
    func claimDueRefreshes(limit: Int, owner: String, duration: TimeInterval) async throws -> [DueRefresh] {
        try reach(); return try await inner.claimDueRefreshes(limit: limit, owner: owner, duration: duration)
    }
    func postponeRefresh(_ lease: RefreshLease, until date: Date) async throws { try reach(); try await inner.postponeRefresh(lease, until: date) }
    func earliestRefreshDue() async throws -> Date? { try reach(); return try await inner.earliestRefreshDue() }
    func restoreRefreshDue(_ date: Date?, of item: ItemKey, itemExpiresAt: Date?) async throws {
        try reach(); try await inner.restoreRefreshDue(date, of: item, itemExpiresAt: itemExpiresAt)
    }
    var dueRefreshesAreShared: Bool { inner.dueRefreshesAreShared }
    func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws { try reach(); try await inner.store(secret, for: key, options: options) }
    func retrieve(_ key: ItemKey) async throws -> RetrievedItem { try reach(); return try await inner.retrieve(key) }
    func delete(_ key: ItemKey) async throws { try reach(); try await inner.delete(key) }
    func list(service: String?) async throws -> [ItemMetadata] { try reach(); return try await inner.list(service: service) }
}
