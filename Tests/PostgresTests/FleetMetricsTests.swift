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
            fleet.clock.advance(by: 5)  // the store's gauges in a scrape are at most 5 s old (StoreFigureCache)
            let scrape = try LoopbackHTTP.get(port: port, "/metrics").response
            #expect(status.revocations.pending == 1)
            #expect(PrometheusText.value(of: "sortedvault_revocations_pending", in: scrape) == Double(status.revocations.pending), "\(scrape)")
            #expect(PrometheusText.value(of: "sortedvault_logins_in_doubt", in: scrape) == Double(status.loginsInDoubt), "\(scrape)")
        }

        /// A scrape's cost does not grow with the scrape rate: 30 scrapes in a row read the store's
        /// figures once (the database calls the daemon counts in its own metrics), where each used to
        /// run the count queries again (2,930 scrapes a second made 51,504 transactions in 10 s).
        @Test func scrapesInARowReadTheStoresFiguresOnce() async throws {
            let fleet = try FleetDaemons(count: 1, database: try FleetDatabase.fresh(), start: false)
            defer { fleet.stopAll() }
            let port = try LoopbackHTTP.portFreeOnIPv4Loopback()
            try (fleet.settingsText + "[metrics]\nlisten = \"127.0.0.1:\(port)\"\n")
                .write(toFile: fleet.hosts[0].configDir + "/policy/settings.toml", atomically: false, encoding: .utf8)
            try fleet.start(0)
            func databaseCalls() throws -> Double {
                let scrape = try LoopbackHTTP.get(port: port, "/metrics")
                #expect(scrape.status == "HTTP/1.1 200 OK", "\(scrape.response)")
                return scrape.response.split(separator: "\n")
                    .filter { $0.hasPrefix("sortedvault_database_call_seconds_count{") }
                    .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
                    .reduce(0, +)
            }
            let before = try databaseCalls()
            for _ in 0..<30 { _ = try databaseCalls() }
            let after = try databaseCalls()
            // The count queries are two calls a read; the session work's own rounds may add a few.
            #expect(after - before < 12, "32 scrapes made \(after - before) database calls")
            // Once they are 5 s old by the daemon's clock, the next scrape reads them again.
            fleet.clock.advance(by: 5)
            let status = try await fleet.sessions(0).fleetStatus()
            let scrape = try LoopbackHTTP.get(port: port, "/metrics").response
            #expect(PrometheusText.value(of: "sortedvault_revocations_pending", in: scrape) == Double(status.revocations.pending), "\(scrape)")
        }
    }
}
