import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// Several managers (daemons) over one store make one refresh request per login between them, and
/// every caller of every manager gets its result.
@Suite(.timeLimit(.minutes(20))) struct FleetSingleRefreshTests {
    @Test func threeManagersWithTenCallersEachMakeOneRequestAndAllGetItsToken() async throws {
        let fleet = FleetSimulation()
        let gate = Gate()
        let provider = CountingProvider(gates: [0: gate])
        let managers = try (0..<3).map { _ in try fleet.manager(transport: provider.transport) }
        try await fleet.signIn(managers[0])
        fleet.clock.advance(by: 3601)

        let results = try await withThrowingTaskGroup(of: AutoLoginResult.self) { group in
            for manager in managers {
                for _ in 0..<10 { group.addTask { try await manager.autoLogin(FleetSimulation.key) } }
            }
            // One manager's request is on the wire; the others wait for its result.
            await provider.transport.waitForRequests(1)
            for _ in 0..<500 { await Task.yield() }
            #expect(provider.transport.requestCount == 1)
            await gate.open()
            var results: [AutoLoginResult] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 30)
        #expect(provider.refreshTokensSent == ["R1"])
        #expect(results.allSatisfy { $0.accessToken == "A2" }, "\(results)")
        #expect(results.allSatisfy { $0.outcome == "refreshed" || $0.outcome == "valid" })
        #expect(text(try await fleet.storedLogin()?.refreshToken) == "R2")
    }

    /// Without change hints (a database's notifications lost), a waiter sees the holder's result
    /// when it looks again by the clock.
    @Test func withoutHintsAWaiterSeesTheResultWhenItLooksAgain() async throws {
        let fleet = FleetSimulation(hints: false)
        let gate = Gate()
        let provider = CountingProvider(gates: [0: gate])
        let a = try fleet.manager(transport: provider.transport), b = try fleet.manager(transport: provider.transport)
        try await fleet.signIn(a)
        fleet.clock.advance(by: 3601)

        let holder = Task { try await a.autoLogin(FleetSimulation.key) }
        await provider.transport.waitForRequests(1)
        let waiter = Task { try await b.autoLogin(FleetSimulation.key) }
        try await fleet.sleepers(1)
        await gate.open()
        #expect(try await holder.value.accessToken == "A2")
        // b is still asleep: nothing told it; its next look (1 s) finds the new tokens.
        #expect(fleet.sleeper.sleeping == 1)
        fleet.clock.advance(by: 1)
        let seen = try await waiter.value
        #expect(seen.outcome == "valid" && seen.accessToken == "A2", "\(seen)")
        #expect(provider.refreshTokensSent == ["R1"])
    }
}
