import Testing
import VaultCore
import VaultTesting

/// The lease guarantees of the in-process lease table, by the same suite the fleet store runs.
@Suite struct LoginLeasesConformanceTests {
    @Test("in-process leases keep the lease guarantees", arguments: LoginLeasesConformance.cases)
    func localLeasesConform(_ check: LoginLeasesConformance.Case) async throws {
        let clock = ManualClock()
        let leases = LocalLoginLeases(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
        try await check.run(.init(a: leases, b: leases, shortLease: 1) { clock.advance(by: max(0, $0.timeIntervalSince(clock.now))) })
    }
}
