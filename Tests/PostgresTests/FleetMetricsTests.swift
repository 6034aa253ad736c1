import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore

extension PostgresSuite {
    /// The operators' endpoint of a fleet daemon on PostgreSQL, scraped over 127.0.0.1: refreshes by
    /// outcome, the revocation backlog as `fleet status` says it, and the database's call latency.
    @Suite struct FleetMetricsTests {
        @Test func aRefreshMovesItsCounterAndTheBacklogGaugeEqualsFleetStatus() async throws {
            let fleet = try FleetDaemons(count: 1, database: try FleetDatabase.fresh(), start: false)
            defer { fleet.stopAll() }
            let port = try LoopbackHTTP.portFreeOnIPv4Loopback()
            try (fleet.settingsText + "[metrics]\nlisten = \"127.0.0.1:\(port)\"\n")
                .write(toFile: fleet.hosts[0].configDir + "/policy/settings.toml", atomically: false, encoding: .utf8)
            try fleet.start(0)
            let provider = try OAuthTestProvider()
            let key = FleetDaemonTests.key
            let refreshed = "sortedvault_refreshes_total{outcome=\"refreshed\"}"

            _ = try await FleetDaemonTests.signIn(fleet.sessions(0), provider)
            let before = try LoopbackHTTP.get(port: port, "/metrics")
            #expect(before.status == "HTTP/1.1 200 OK", "\(before.response)")
            #expect(PrometheusText.value(of: refreshed, in: before.response) == nil, "\(before.response)")

            fleet.clock.advance(by: 3600)  // the access token has expired
            let outcome = try await fleet.sessions(0).autoLogin(key)
            guard case .refreshed = outcome else {
                Issue.record("AutoLogin of an expired login answered \(outcome.outcome), not refreshed")
                return
            }
            let after = try LoopbackHTTP.get(port: port, "/metrics").response
            #expect(PrometheusText.value(of: refreshed, in: after) == 1, "\(after)")
            #expect(after.contains("sortedvault_database_call_seconds_count{"), "no database latency in \(after)")

            // The provider is down: the logout's revocation stays queued in the fleet's outbox.
            provider.stop()
            let revoked = try fleet.hosts[0].run(["fleet", "revoke", "--service", key.service])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            let status = try await fleet.sessions(0).fleetStatus()
            let scrape = try LoopbackHTTP.get(port: port, "/metrics").response
            #expect(status.revocations.pending == 1)
            #expect(PrometheusText.value(of: "sortedvault_revocations_pending", in: scrape) == Double(status.revocations.pending), "\(scrape)")
            #expect(PrometheusText.value(of: "sortedvault_logins_in_doubt", in: scrape) == Double(status.loginsInDoubt), "\(scrape)")
        }
    }
}
