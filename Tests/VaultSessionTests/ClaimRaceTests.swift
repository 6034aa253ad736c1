import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// A manager reads the login, then claims its lease; another manager may refresh the login
/// completely in between (its lease claimed, the provider asked, the result committed, the lease
/// given back). The first manager's claim is then granted, but the refresh token it read was
/// rotated: it must not send it (a strict provider answers a reused refresh token by revoking the login).
@Suite struct ClaimRaceTests {
    @Test func aManagerWhoseLoginWasRefreshedBeforeItsClaimAsksTheProviderNothing() async throws {
        let fleet = FleetSimulation()
        let provider = CountingProvider()
        let hooked = BeforeClaim(inner: fleet.store)
        let a = try fleet.manager(transport: provider.transport)
        let b = try SessionManager(store: hooked, transport: provider.transport, clock: fleet.clock, random: { 0.5 }, sleeper: fleet.sleeper)
        try await fleet.signIn(a)
        fleet.clock.advance(by: 3601)

        hooked.arm {
            let refreshed = try await a.autoLogin(FleetSimulation.key)
            #expect(refreshed.accessToken == "A2")
        }
        let seen = try await b.autoLogin(FleetSimulation.key)
        #expect(provider.refreshTokensSent == ["R1"])
        #expect(seen.outcome == "valid" && seen.accessToken == "A2", "\(seen)")
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R2")
    }
}

/// A lease store that runs an armed action once, just before the next claim goes through.
private final class BeforeClaim: DueRefreshes, Sendable {
    let inner: any DueRefreshes
    private let action = Locked<(@Sendable () async throws -> Void)?>(nil)

    init(inner: any DueRefreshes) { self.inner = inner }
    func claimDueRefreshes(limit: Int, owner: String, duration: TimeInterval) async throws -> [DueRefresh] {
        try await inner.claimDueRefreshes(limit: limit, owner: owner, duration: duration)
    }
    func postponeRefresh(_ lease: RefreshLease, until date: Date) async throws { try await inner.postponeRefresh(lease, until: date) }
    func earliestRefreshDue() async throws -> Date? { try await inner.earliestRefreshDue() }
    func restoreRefreshDue(_ date: Date?, of item: ItemKey, itemExpiresAt: Date?) async throws {
        try await inner.restoreRefreshDue(date, of: item, itemExpiresAt: itemExpiresAt)
    }
    var dueRefreshesAreShared: Bool { inner.dueRefreshesAreShared }

    func arm(_ body: @escaping @Sendable () async throws -> Void) { action.withLock { $0 = body } }

    func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim {
        if let body = action.withLock({ action in defer { action = nil }; return action }) { try await body() }
        return try await inner.claimRefresh(of: item, owner: owner, duration: duration)
    }
    func store(_ secret: SecureBytes, for item: ItemKey, options: StoreOptions, holding lease: RefreshLease) async throws -> Bool {
        try await inner.store(secret, for: item, options: options, holding: lease)
    }
    func release(_ lease: RefreshLease, answerLost: Bool) async throws { try await inner.release(lease, answerLost: answerLost) }
    func changes(of item: ItemKey) async -> AsyncStream<Void>? { await inner.changes(of: item) }
    func loginsInDoubt() async throws -> Int { try await inner.loginsInDoubt() }
    func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws { try await inner.store(secret, for: key, options: options) }
    func retrieve(_ key: ItemKey) async throws -> RetrievedItem { try await inner.retrieve(key) }
    func delete(_ key: ItemKey) async throws { try await inner.delete(key) }
    func list(service: String?) async throws -> [ItemMetadata] { try await inner.list(service: service) }
}
