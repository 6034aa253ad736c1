import Testing
import VaultCore
import VaultTesting

/// The due-refresh guarantees of the in-process lease table, by the same suite the fleet store runs.
@Suite(.timeLimit(.minutes(20))) struct DueRefreshesConformanceTests {
    @Test("in-process leases keep the due-refresh guarantees", arguments: DueRefreshesConformance.cases)
    func localDueRefreshesConform(_ check: DueRefreshesConformance.Case) async throws {
        let clock = ManualClock()
        let store = LocalLoginLeases(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
        try await check.run(.init(a: store, b: store, clock: clock, shortLease: 1) { clock.advance(by: max(0, $0.timeIntervalSince(clock.now))) })
    }
}
