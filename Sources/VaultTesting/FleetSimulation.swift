import Foundation
import VaultCore
import VaultCrypto
import VaultSession

/// Several session managers, as several daemons, over one store and one lease table, on one
/// manual clock: the logic of fleet mode without a database.
///
/// ```swift
/// let fleet = FleetSimulation()
/// let a = try fleet.manager(transport: providerA), b = try fleet.manager(transport: providerB)
/// fleet.clock.advance(by: 31)   // leases run out; waits for another manager wake by this clock
/// ```
///
/// The lease table is the in-process ``LocalLoginLeases``, shared by every manager made here; the
/// clock moves the managers' sleeps too (``ManualSleepClock``). With `hints: false` the store gives
/// no change hints, as a database whose notifications were lost: waiters then see a change only
/// when the test moves the clock past their next look.
public struct FleetSimulation: Sendable {
    public let clock: ManualClock
    /// What the managers sleep on while they wait for another manager's refresh.
    public let sleeper: ManualSleepClock
    /// The store underneath, for reading what was written.
    public let memory: InMemoryTokenStore
    /// The store with its leases and due times, as every manager sees it.
    public let store: any DueRefreshes

    public init(hints: Bool = true) {
        sleeper = ManualSleepClock()
        clock = ManualClock(mirror: sleeper.reach)
        memory = InMemoryTokenStore(clock: clock)
        let leases = LocalLoginLeases(wrapping: memory, clock: clock)
        store = hints ? leases : WithoutHints(inner: leases)
    }

    /// A manager (a daemon) of the fleet, reaching the provider through `transport`.
    public func manager(transport: any OAuthTransport, configuration: SessionManager.Configuration = .init(),
                        random: @escaping @Sendable () -> Double = { 0.5 }) throws -> SessionManager {
        try SessionManager(store: store, transport: transport, clock: clock, configuration: configuration,
                           random: random, sleeper: sleeper)
    }
}

/// A lease store that gives no change hints.
private struct WithoutHints: DueRefreshes {
    let inner: LocalLoginLeases
    func claimDueRefreshes(limit: Int, owner: String, duration: TimeInterval) async throws -> [DueRefresh] {
        try await inner.claimDueRefreshes(limit: limit, owner: owner, duration: duration)
    }
    func postponeRefresh(_ lease: RefreshLease, until date: Date) async throws { try await inner.postponeRefresh(lease, until: date) }
    func earliestRefreshDue() async throws -> Date? { try await inner.earliestRefreshDue() }
    func restoreRefreshDue(_ date: Date?, of item: ItemKey, itemExpiresAt: Date?) async throws {
        try await inner.restoreRefreshDue(date, of: item, itemExpiresAt: itemExpiresAt)
    }
    var dueRefreshesAreShared: Bool { inner.dueRefreshesAreShared }

    func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim {
        try await inner.claimRefresh(of: item, owner: owner, duration: duration)
    }
    func store(_ secret: SecureBytes, for item: ItemKey, options: StoreOptions, holding lease: RefreshLease) async throws -> Bool {
        try await inner.store(secret, for: item, options: options, holding: lease)
    }
    func release(_ lease: RefreshLease, answerLost: Bool) async throws {
        try await inner.release(lease, answerLost: answerLost)
    }
    func loginsInDoubt() async throws -> Int { try await inner.loginsInDoubt() }
    func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try await inner.store(secret, for: key, options: options)
    }
    func retrieve(_ key: ItemKey) async throws -> RetrievedItem { try await inner.retrieve(key) }
    func delete(_ key: ItemKey) async throws { try await inner.delete(key) }
    func list(service: String?) async throws -> [ItemMetadata] { try await inner.list(service: service) }
}
