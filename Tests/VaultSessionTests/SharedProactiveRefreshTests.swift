import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// Proactive refresh through the store's due times: whichever manager wrote a login, any manager
/// sharing the store refreshes it when it is due, once, and a hold-back after a failure is every
/// manager's.
@Suite(.timeLimit(.minutes(20))) struct SharedProactiveRefreshTests {
    @Test func aLoginSavedThroughOneManagerIsRefreshedAheadOfTimeByAnotherThatNeverReadIt() async throws {
        let fleet = FleetSimulation()
        let provider = CountingProvider()
        let a = try fleet.manager(transport: provider.transport), b = try fleet.manager(transport: provider.transport)
        try await fleet.signIn(a)
        // minValid 60 + refreshAhead 60 + half of refreshJitter 30 before the hour is up.
        fleet.clock.advance(by: 3600 - 135)
        await b.runDueWork()
        #expect(provider.refreshTokensSent == ["R1"])
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R2")
        await a.runDueWork()
        #expect(provider.refreshTokensSent == ["R1"], "the login was refreshed twice")
        #expect(try await a.autoLogin(FleetSimulation.key).accessToken == "A2")
    }

    @Test func aFailedProactiveRefreshHoldsBackEveryManager() async throws {
        let fleet = FleetSimulation()
        let provider = CountingProvider(answers: [0: .unreachable])
        let a = try fleet.manager(transport: provider.transport), b = try fleet.manager(transport: provider.transport)
        try await fleet.signIn(a)
        fleet.clock.advance(by: 3600 - 135)
        await a.runDueWork()
        #expect(provider.refreshTokensSent == ["R1"])
        await b.runDueWork()
        #expect(provider.refreshTokensSent == ["R1"], "another manager retried within the hold-back")
        fleet.clock.advance(by: 1.5)   // the first hold-back: 2 s, half of it jittered by 0.5
        await b.runDueWork()
        #expect(provider.refreshTokensSent == ["R1", "R1"])
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R3")
    }

    @Test func aStoreWithLeasesButNoDueRefreshesIsRefused() async throws {
        let clock = ManualClock()
        let leasesOnly = LeasesOnly(inner: LocalLoginLeases(wrapping: InMemoryTokenStore(clock: clock), clock: clock))
        #expect(throws: VaultError.self) {
            try SessionManager(store: leasesOnly, transport: CountingProvider().transport, clock: clock)
        }
    }
}

/// A lease store without due refreshes.
private struct LeasesOnly: LoginLeases {
    let inner: LocalLoginLeases
    func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim {
        try await inner.claimRefresh(of: item, owner: owner, duration: duration)
    }
    func store(_ secret: SecureBytes, for item: ItemKey, options: StoreOptions, holding lease: RefreshLease) async throws -> Bool {
        try await inner.store(secret, for: item, options: options, holding: lease)
    }
    func recordRequest(under lease: RefreshLease) async throws -> Bool { try await inner.recordRequest(under: lease) }
    func release(_ lease: RefreshLease, answerLost: Bool) async throws { try await inner.release(lease, answerLost: answerLost) }
    func loginsInDoubt() async throws -> Int { try await inner.loginsInDoubt() }
    func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws { try await inner.store(secret, for: key, options: options) }
    func retrieve(_ key: ItemKey) async throws -> RetrievedItem { try await inner.retrieve(key) }
    func delete(_ key: ItemKey) async throws { try await inner.delete(key) }
    func list(service: String?) async throws -> [ItemMetadata] { try await inner.list(service: service) }
}
