import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultSession
import VaultTesting

extension PostgresSuite {
    /// Issue 22's scenario 4, database loss: PostgreSQL is restarted (`pg_ctl restart`), then
    /// stopped for longer than the daemons' call deadline and started again, while clients of three
    /// daemons keep asking AutoLogin of expired logins. A ticker moves the daemons' clock past the
    /// call deadline again and again, so any call waiting on the database is answered. Every call
    /// returns (a login, `offline`, or a storage error), none hangs, and some were answered while
    /// the database was away; afterwards every login is valid through every daemon, and no refresh
    /// token was sent twice (no `invalid_grant`).
    @Suite struct FleetDatabaseLossTests {
        @Test
        func aRestartedAndAStoppedDatabaseLoseNoLoginAndDoubleNoRefresh() async throws {
            try await run(holdingRefreshAnswers: false)
        }

        /// The same with every login's refresh out while the database is away: the provider holds
        /// its answers (rotated refresh tokens) until the database is down, and each daemon gets its
        /// answer then. They must be written once it is back, not dropped — else another daemon
        /// retries with the rotated-away token.
        @Test
        func aRefreshOutWhileTheDatabaseGoesAwayIsNotLost() async throws {
            try await run(holdingRefreshAnswers: true)
        }

        func run(holdingRefreshAnswers: Bool) async throws {
            let server = try PostgresServer.start()   // its own server: this test stops it
            defer { server.stop() }
            // A held answer must reach its daemon: a provider deadline (real time) longer than a busy
            // machine takes to stop the database. Leases are twice that, so no daemon takes over
            // another's refresh while the test runs.
            let fleet = try FleetDaemons(count: 3, database: FleetDatabase(server: server, name: try server.createDatabase()),
                                         callDeadlineSeconds: 10, providerDeadlineSeconds: holdingRefreshAnswers ? 300 : nil)
            defer { fleet.stopAll() }
            let provider = try OAuthTestProvider()
            let keys = try (0..<6).map { try ItemKey(service: "com.sorted.api", account: "user-\($0)") }
            for (index, key) in keys.enumerated() { _ = try await FleetDaemonTests.signIn(fleet.sessions(index % 3), provider, key: key) }
            fleet.clock.advance(by: 3600)
            if holdingRefreshAnswers {
                try await provider.delay(seconds: 600)   // held until the test sets it back to 0
                // Every login's refresh goes out, one caller per login, before the clients and the
                // ticker start: while the daemons' clock stands still no database call runs out of
                // time, so no refresh fails to start (its lease not taken) on a busy machine, to be
                // retried only by clients whose calls all wait on held answers.
                for (index, key) in keys.enumerated() { Task { _ = try? await fleet.sessions(index % 3).autoLogin(key) } }
                try await hangGuard("every login's refresh to reach the provider") {
                    while try await provider.refreshResponses(200) < keys.count { try await Task.sleep(for: .milliseconds(20)) }
                }
            }

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
            let kept = "refreshed tokens could not be stored; kept in memory until they can be"
            func keptAnswers() -> Int {
                fleet.hosts.map { $0.daemonOutput().components(separatedBy: kept).count - 1 }.reduce(0, +)
            }
            try await Task.sleep(for: .milliseconds(500))
            try server.restart()
            try await Task.sleep(for: .milliseconds(500))
            try server.shutDown()
            if holdingRefreshAnswers {
                // The answers reach their daemons while the database is down: each is kept in memory.
                try await provider.delay(seconds: 0)
                try await waitUntil("every held answer to be kept in memory by its daemon (\(keptAnswers()) so far)") { keptAnswers() >= keys.count }
            } else {
                try await Task.sleep(for: .seconds(2))   // 2 s real, many deadlines on the daemons' clock
            }
            try server.startUp()
            try await Task.sleep(for: .milliseconds(500))
            running.clear()
            var outcomes: [String] = []
            for client in clients {
                outcomes += try await hangGuard("a client's last AutoLogin calls (daemons' logs: \(fleet.sessionWarnings()))") { await client.value }
            }

            let counted = Dictionary(grouping: outcomes, by: { $0 }).mapValues(\.count)
            let unexpected = outcomes.filter { !["valid", "refreshed", "offline", "error storageFailure", "error unavailable"].contains($0) }
            #expect(unexpected.isEmpty, "\(Set(unexpected))")
            let answeredWhileAway = outcomes.count { ["offline", "error storageFailure", "error unavailable"].contains($0) }
            #expect(answeredWhileAway > 0, "no call was answered while the database was away: \(counted)")

            // Afterwards (the pools reconnect with a backoff of their own; the ticker still moves the
            // daemons' clock, as time moves for a real daemon): every login is valid everywhere.
            var missing: [String] = []
            let giveUp = ContinuousClock.now + .seconds(600)
            repeat {
                if !missing.isEmpty { try await Task.sleep(for: .milliseconds(250)) }
                missing = []
                for index in fleet.hosts.indices {
                    for key in keys {
                        let result = try? await fleet.sessions(index).autoLogin(key)
                        if case .valid = result { continue }
                        if case .refreshed = result { continue }
                        missing.append("daemon \(index) \(key.account): \(result?.outcome ?? "error")")
                    }
                }
            } while !missing.isEmpty && !missing.contains(where: { $0.contains("reauthRequired") }) && ContinuousClock.now < giveUp
            ticker.cancel()
            #expect(missing.isEmpty, "\(missing)")
            if !missing.isEmpty { print(fleet.sessionWarnings()) }
            let perToken = try await provider.refreshesPerToken()
            #expect(perToken.count >= keys.count, "only \(perToken.count) refresh tokens were used for \(keys.count) expired logins")
            #expect(perToken.values.allSatisfy { $0 == 1 }, "a refresh token was sent more than once: \(perToken.values.sorted())")
            #expect(try await provider.refreshResponses(400) == 0)
            print("fleet database loss (refresh answers held: \(holdingRefreshAnswers)): \(outcomes.count) AutoLogin calls during restart and stop: \(counted); \(perToken.count) refresh tokens used, each \(Set(perToken.values)) time(s); \(keptAnswers()) answers kept in memory")
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

extension FleetDaemons {
    /// Each daemon's session warnings (the first 12), for a failure's message.
    func sessionWarnings() -> String {
        hosts.enumerated().map { index, host in
            let lines = host.daemonOutput().split(separator: "\n").filter { $0.contains("[VaultSession]") && !$0.contains("queued revocations could not be claimed") }
            return "daemon \(index): \(lines.count) session warnings:\n\(lines.prefix(12).joined(separator: "\n"))"
        }.joined(separator: "\n")
    }
}
