import Testing
import VaultCore
import VaultCrypto
import VaultTesting

/// The lease guarantees of the in-process lease table, by the same suite the fleet store runs.
@Suite(.timeLimit(.minutes(20))) struct LoginLeasesConformanceTests {
    @Test("in-process leases keep the lease guarantees", arguments: LoginLeasesConformance.cases)
    func localLeasesConform(_ check: LoginLeasesConformance.Case) async throws {
        let clock = ManualClock()
        let leases = LocalLoginLeases(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
        try await check.run(.init(a: leases, b: leases, shortLease: 1) { clock.advance(by: max(0, $0.timeIntervalSince(clock.now))) })
    }
}

/// `fleet status`'s "logins in doubt" of the in-process lease table.
@Suite(.timeLimit(.minutes(20))) struct LocalLoginsInDoubtTests {
    @Test func aLostAnswerOrALeaseThatRanOutAfterItsRequestIsInDoubtARefreshUnderWayOrUnsentIsNot() async throws {
        let clock = ManualClock()
        let leases = LocalLoginLeases(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
        let ada = try ItemKey(service: "login", account: "ada"), bob = try ItemKey(service: "login", account: "bob")
        let cy = try ItemKey(service: "login", account: "cy")
        for item in [ada, bob, cy] { try await leases.store(SecureBytes(copying: [1]), for: item, options: StoreOptions()) }
        guard case .granted(let lease, _) = try await leases.claimRefresh(of: ada, owner: "a", duration: 30),
              case .granted(let bobs, _) = try await leases.claimRefresh(of: bob, owner: "a", duration: 60) else {
            Issue.record("the claims were not granted")
            return
        }
        _ = try await leases.claimRefresh(of: cy, owner: "a", duration: 60)
        #expect(try await leases.recordRequest(under: bobs))
        #expect(try await leases.loginsInDoubt() == 0)
        try await leases.release(lease, answerLost: true)
        #expect(try await leases.loginsInDoubt() == 1)
        clock.advance(by: 61)   // bob's and cy's holder never came back; only bob's request went out
        #expect(try await leases.loginsInDoubt() == 2)
    }
}
