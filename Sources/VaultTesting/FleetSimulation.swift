import FoundationEssentials
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
private struct WithoutHints: ForwardingDueRefreshes {
    let inner: any DueRefreshes
    func changes(of item: ItemKey) async -> AsyncStream<Void>? { nil }
}
