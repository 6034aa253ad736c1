import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultSession

extension PostgresSuite {
    /// Issue 22's scenario 4, database loss: PostgreSQL is restarted (`pg_ctl restart`), then
    /// stopped for longer than the daemons' call deadline and started again, while clients of three
    /// daemons keep asking AutoLogin of expired logins. A ticker moves the daemons' clock past the
    /// call deadline again and again, so any call waiting on the database is answered. Every call
    /// returns (a login, `offline`, or a storage error), none hangs; afterwards every login is valid
    /// through every daemon, and no refresh token was sent twice (no `invalid_grant`).
    @Suite struct FleetDatabaseLossTests {
        @Test
        func aRestartedAndAStoppedDatabaseLoseNoLoginAndDoubleNoRefresh() async throws {
            try await run(holdingRefreshAnswers: false)
        }

        /// The same with every refresh answer held a second at the provider, so refreshes are out
        /// while the database goes away: their answers (rotated refresh tokens) must be written once
        /// it is back, not dropped — else another daemon retries with the rotated-away token.
        @Test
        func aRefreshOutWhileTheDatabaseGoesAwayIsNotLost() async throws {
            try await run(holdingRefreshAnswers: true)
        }

        func run(holdingRefreshAnswers: Bool) async throws {
            let server = try PostgresServer.start()   // its own server: this test stops it
            defer { server.stop() }
            let fleet = try FleetDaemons(count: 3, database: FleetDatabase(server: server, name: try server.createDatabase()),
                                         callDeadlineSeconds: 10)
            defer { fleet.stopAll() }
            let provider = try OAuthTestProvider()
            let keys = try (0..<6).map { try ItemKey(service: "com.sorted.api", account: "user-\($0)") }
            for (index, key) in keys.enumerated() { _ = try await FleetDaemonTests.signIn(fleet.sessions(index % 3), provider, key: key) }
            fleet.clock.advance(by: 3600)
            if holdingRefreshAnswers { try await provider.delay(seconds: 1) }

            let running = Flag()
            let ticker = Task {
                while !Task.isCancelled {
                    fleet.clock.advance(by: TimeInterval(fleet.callDeadlineSeconds + 1))
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
            defer { ticker.cancel() }
            let clients = (0..<6).map { client in
                Task { () -> [String] in
                    var outcomes: [String] = []
                    while running.isSet {
                        for key in keys.shuffled() {
                            do { outcomes.append(try await fleet.sessions(client % 3).autoLogin(key).outcome) }
                            catch let error as VaultError { outcomes.append("error \(error.code)") }
                            catch { outcomes.append("failure \(error)") }
                        }
                    }
                    return outcomes
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            try server.restart()
            try await Task.sleep(for: .milliseconds(500))
            try server.shutDown()
            try await Task.sleep(for: .seconds(2))   // 2 s real, many deadlines on the daemons' clock
            try server.startUp()
            try await provider.delay(seconds: 0)
            try await Task.sleep(for: .milliseconds(500))
            running.clear()
            var outcomes: [String] = []
            for client in clients { outcomes += try await hangGuard(seconds: 600) { await client.value } }

            let counted = Dictionary(grouping: outcomes, by: { $0 }).mapValues(\.count)
            let unexpected = outcomes.filter { !["valid", "refreshed", "offline", "error storageFailure", "error unavailable"].contains($0) }
            #expect(unexpected.isEmpty, "\(Set(unexpected))")

            // Afterwards (the pools reconnect with a backoff of their own; the ticker still moves the
            // daemons' clock, as time moves for a real daemon): every login is valid everywhere.
            var missing: [String] = []
            for attempt in 0..<240 {
                missing = []
                for index in fleet.hosts.indices {
                    for key in keys {
                        let result = try? await fleet.sessions(index).autoLogin(key)
                        if case .valid = result { continue }
                        if case .refreshed = result { continue }
                        missing.append("daemon \(index) \(key.account): \(result?.outcome ?? "error")")
                    }
                }
                if missing.isEmpty || missing.contains(where: { $0.contains("reauthRequired") }) { break }
                if attempt > 0 { try await Task.sleep(for: .milliseconds(250)) }
            }
            ticker.cancel()
            #expect(missing.isEmpty, "\(missing)")
            if !missing.isEmpty {
                for (index, host) in fleet.hosts.enumerated() {
                    let lines = host.daemonOutput().split(separator: "\n").filter { $0.contains("[VaultSession]") && !$0.contains("queued revocations could not be claimed") }
                    print("daemon \(index): \(lines.count) session warnings:\n\(lines.prefix(12).joined(separator: "\n"))")
                }
            }
            let perToken = try await provider.refreshesPerToken()
            #expect(perToken.values.allSatisfy { $0 == 1 }, "a refresh token was sent more than once: \(perToken.values.sorted())")
            #expect(try await provider.refreshResponses(400) == 0)
            print("fleet database loss (refresh answers held: \(holdingRefreshAnswers)): \(outcomes.count) AutoLogin calls during restart and stop: \(counted); \(perToken.count) refresh tokens used, each \(Set(perToken.values)) time(s)")
        }
    }
}

/// A flag the test clears to end its clients' loops.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = true
    var isSet: Bool { lock.withLock { value } }
    func clear() { lock.withLock { value = false } }
}
