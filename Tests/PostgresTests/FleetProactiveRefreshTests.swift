import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore

extension PostgresSuite {
    /// Issue 22's distributed background work, for proactive refresh: three real daemons with
    /// proactive refresh on, logins saved through each, then one daemon leaves the fleet. When the
    /// tokens come due, the two left refresh every login — the departed daemon's too, which neither
    /// ever read — each exactly once at the real provider (django-oauth-toolkit, rotating and strict),
    /// with no `invalid_grant`. Who refreshed is read from each daemon's own
    /// `sortedvault_refreshes_total{outcome="refreshed"}`.
    @Suite struct FleetProactiveRefreshTests {
        static let refreshed = "sortedvault_refreshes_total{outcome=\"refreshed\"}"

        @Test func dueLoginsAreRefreshedOnceEachAcrossTheFleetWhoeverSavedThem() async throws {
            let logins = 30
            let fleet = try FleetDaemons(count: 3, database: try FleetDatabase.fresh(), start: false)
            defer { fleet.stopAll() }
            var ports: [Int] = []
            for (index, host) in fleet.hosts.enumerated() {
                let port = try LoopbackHTTP.portFreeOnIPv4Loopback()
                ports.append(port)
                let settings = fleet.settingsText.replacingOccurrences(of: "proactive_refresh_seconds = 0", with: "proactive_refresh_seconds = 60")
                    + "[metrics]\nlisten = \"127.0.0.1:\(port)\"\n"
                try settings.write(toFile: host.configDir + "/policy/settings.toml", atomically: false, encoding: .utf8)
                try fleet.start(index)
            }
            let provider = try OAuthTestProvider()
            let keys = try (0..<logins).map { try ItemKey(service: "com.sorted.api", account: "user-\($0)") }
            for (index, key) in keys.enumerated() {
                _ = try await FleetDaemonTests.signIn(fleet.sessions(index % 3), provider, key: key)
            }
            // Daemon 0 leaves: a third of the logins were saved through it, and no running daemon read them.
            _ = fleet.hosts[0].stopDaemon()
            let before = try await provider.refreshRequests()

            fleet.clock.advance(by: 3600)   // every login is due, on every daemon's clock
            // The hang guard only ends a broken run; nothing here bounds how long the refreshes take.
            var refreshes = 0
            for _ in 0..<1200 {
                refreshes = try await provider.refreshRequests() - before
                if refreshes >= logins { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(refreshes == logins, "the provider saw \(refreshes) refresh requests for \(logins) due logins")

            // Every login now holds fresh tokens: asking for each makes no further request.
            var outcomes: [String: Int] = [:]
            for (index, key) in keys.enumerated() {
                let outcome = try await fleet.sessions(1 + index % 2).autoLogin(key).outcome
                outcomes[outcome, default: 0] += 1
            }
            #expect(outcomes.keys.allSatisfy { $0 == "valid" || $0 == "refreshed" }, "\(outcomes)")
            #expect(try await provider.refreshRequests() - before == logins, "a login was refreshed more than once")
            #expect(try await provider.refreshResponses(400) == 0, "a refresh token was sent after it was rotated")

            let shares = try [1, 2].map { index in
                PrometheusText.value(of: Self.refreshed, in: try LoopbackHTTP.get(port: ports[index], "/metrics").response) ?? 0
            }
            #expect(shares.reduce(0, +) == Double(logins), "the daemons count \(shares) refreshes")
            // How the 30 split between the two is the machine's timing (either may wake first and
            // claim batch after batch), so it is shown, not bounded; that claims never overlap is
            // DueRefreshesConformance's, with eight claimers at once.
            if refreshes != logins {
                for (index, host) in fleet.hosts.enumerated() {
                    let lines = host.daemonOutput().split(separator: "\n").filter { $0.contains("warning") || $0.contains("error") }
                    print("daemon \(index): \(lines.count) warnings or errors; the first: \(lines.prefix(8).joined(separator: "\n"))")
                }
            }
            print("fleet proactive refresh: \(logins) logins, \(refreshes) refresh requests, shares by daemon 1 and 2: \(shares), AutoLogin afterwards: \(outcomes)")
        }
    }
}
