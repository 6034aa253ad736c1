import Foundation
import MetricsTestKit
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// What a session manager reports through swift-metrics, read back with swift-metrics' own TestMetrics.
@Suite(.timeLimit(.minutes(20))) struct SessionMetricsTests {
    @Test func refreshesAreCountedByOutcome() async throws {
        let metrics = TestMetrics(), clock = ManualClock()
        let transport = ScriptedOAuthTransport([.tokens(access: "A2", refresh: "R2"), .unreachable])
        let sessions = try SessionManager(store: InMemoryTokenStore(clock: clock), transport: transport, clock: clock,
                                          random: { 0.5 }, metrics: metrics)
        try await sessions.save(TokenResponse(accessToken: secure("A1"), expiresIn: 3600, refreshToken: secure("R1")),
                                provider: try testProvider(), for: SessionHarness.key)
        clock.advance(by: 3601)
        #expect(try await sessions.autoLogin(SessionHarness.key).outcome == "refreshed")
        clock.advance(by: 3601)
        #expect(try await sessions.autoLogin(SessionHarness.key).outcome == "offline")
        #expect(metrics.counterTotal(label: "sortedvault_refreshes_total", dimensions: [("outcome", "refreshed")]) == 1)
        #expect(metrics.counterTotal(label: "sortedvault_refreshes_total", dimensions: [("outcome", "offline")]) == 1)
        #expect(metrics.counterTotal(label: "sortedvault_fenced_commits_total") == 0)
    }

    /// The late holder of FencedCommitTests: its write is fenced, counted once, and its round is `superseded`.
    @Test func aFencedCommitIsCounted() async throws {
        let metrics = TestMetrics(), fleet = FleetSimulation()
        let gateA = Gate(), gateB = Gate()
        let providerA = CountingProvider(gates: [0: gateA])
        let providerB = CountingProvider(gates: [0: gateB], answers: [0: .tokens(access: "A3", refresh: "R3")])
        func manager(_ provider: CountingProvider) throws -> SessionManager {
            try SessionManager(store: fleet.store, transport: provider.transport, clock: fleet.clock, random: { 0.5 },
                               sleeper: fleet.sleeper, metrics: metrics)
        }
        let a = try manager(providerA), b = try manager(providerB)
        try await fleet.signIn(a)
        fleet.clock.advance(by: 3601)

        let lateHolder = Task { try await a.autoLogin(FleetSimulation.key) }
        await providerA.transport.waitForRequests(1)
        fleet.clock.advance(by: 31)   // a's lease runs out while its request is out; b takes the login over
        let taker = Task { try await b.autoLogin(FleetSimulation.key) }
        await providerB.transport.waitForRequests(1)
        // a's answer comes while b's lease is live: the store still holds R1, but the write is fenced.
        await gateA.open()
        _ = try await finishes(within: 600) { await providerA.transport.waitForRequests(3) }
        await gateB.open()
        #expect(try await taker.value.outcome == "refreshed")
        _ = try await lateHolder.value
        #expect(metrics.counterTotal(label: "sortedvault_fenced_commits_total") == 1)
        #expect(metrics.counterTotal(label: "sortedvault_refreshes_total", dimensions: [("outcome", "superseded")]) == 1)
        #expect(metrics.counterTotal(label: "sortedvault_refreshes_total", dimensions: [("outcome", "refreshed")]) == 1)
    }

    @Test func theBackgroundWorkSetsTheBacklogGauges() async throws {
        let metrics = TestMetrics(), clock = ManualClock()
        let sessions = try SessionManager(store: InMemoryTokenStore(clock: clock), transport: ScriptedOAuthTransport([.unreachable]),
                                          clock: clock, random: { 0.5 }, metrics: metrics)
        try await sessions.save(TokenResponse(accessToken: secure("A1"), expiresIn: 3600, refreshToken: secure("R1")),
                                provider: try testProvider(), for: SessionHarness.key)
        #expect(try await sessions.logout(SessionHarness.key).revocationQueued)
        clock.advance(by: 10)
        await sessions.runDueWork()   // the provider is still down: the entry stays
        #expect(try metrics.expectGauge("sortedvault_revocations_pending").lastValue == 1)
        #expect(try metrics.expectGauge("sortedvault_revocations_stuck").lastValue == 0)
        #expect(try metrics.expectGauge("sortedvault_revocation_oldest_seconds").lastValue == 10)
        #expect(try metrics.expectGauge("sortedvault_logins_in_doubt").lastValue == 0)
    }
}
