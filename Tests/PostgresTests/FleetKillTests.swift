import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultSession

extension PostgresSuite {
    /// Issue 22's kill -9 scenario, reduced: the daemon holding a login's refresh lease dies after
    /// the provider has rotated the refresh token but before the answer reached it. Another daemon
    /// takes over once the lease has run out (on the database's clock) and makes the one retry with
    /// the same refresh token, never more than one extra provider call. A graceful provider (the
    /// GoTrue stand-in) hands the lost answer back, so the retry recovers the login; a strict one
    /// (django-oauth-toolkit) rejects the reused token, and the login ends
    /// `reauthRequired(rotationInDoubt)`.
    @Suite struct FleetKillTests {
        @Test(arguments: FleetProvider.allCases)
        func aLoginWhoseRefreshingDaemonWasKilledIsRecoveredByTheOneRetryOrEndsInDoubt(_ kind: FleetProvider) async throws {
            let fleet = try FleetDaemons(count: 2, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let provider = try kind.start()
            let key = FleetDaemonTests.key
            try await Self.killTheHolderAfterTheProviderRotated(fleet, provider)
            try await provider.delay(seconds: 0)

            // The dead daemon's lease runs out on the database's clock (30 s); B waits for it, then retries once.
            let result = try await hangGuard(seconds: 600) { try await fleet.sessions(1).autoLogin(key) }
            switch (kind, result) {
            case (.graceful, .refreshed): break
            case (.strict, .reauthRequired(let reason)): #expect(reason == .rotationInDoubt, "\(result)")
            default: Issue.record("\(kind) provider: the other daemon answered \(result)")
            }
            #expect(try await provider.refreshesPerToken().values.sorted() == [2], "the one refresh token, sent twice")
            print("fleet kill -9 (\(kind)): the other daemon answered \(result.outcome) after \(try await provider.refreshRequests()) refresh requests")
            #expect(try await provider.refreshRequests() <= 2, "more than one extra provider call")
            #expect(try await provider.refreshRequests() == 2, "the one retry was not made")
        }

        /// Signs in through daemon 0, lets the access token expire and has daemon 0 refresh it; the
        /// provider rotates the refresh token and holds its answer, and daemon 0 is killed before the
        /// answer reaches it. Its lease stays in the database until it runs out (30 s).
        static func killTheHolderAfterTheProviderRotated(_ fleet: FleetDaemons, _ provider: ProviderServer) async throws {
            let key = FleetDaemonTests.key
            _ = try await FleetDaemonTests.signIn(fleet.sessions(0), provider)
            fleet.clock.advance(by: 3600)
            try await provider.delay(seconds: 120)
            let holder = Task { try? await fleet.sessions(0).autoLogin(key) }
            try await hangGuard {
                while try await provider.refreshResponses(200) < 1 { try await Task.sleep(for: .milliseconds(20)) }
            }
            fleet.hosts[0].killDaemon()
            _ = await holder.value
        }

        /// The CLI hears the other daemon's answer however long the dead daemon's lease kept it
        /// waiting (issue 34, point 13b). Its caller starts as the holder dies, waits out the lease
        /// (30 s on the database's clock), and the retry's answer comes 5 s after that: past the
        /// 30 s the CLI used to wait, when it gave up with "did not answer in time" (exit 4) while the
        /// daemon worked on. The client now waits longer than the daemon ever takes to answer.
        @Test func theCLIWaitsOutADeadDaemonsLeaseAndHearsTheAnswer() async throws {
            let fleet = try FleetDaemons(count: 2, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let provider = try FleetProvider.graceful.start()
            let key = FleetDaemonTests.key
            try await Self.killTheHolderAfterTheProviderRotated(fleet, provider)
            try await provider.delay(seconds: 5)  // the retry's answer, held well within the 15 s provider deadline

            let host = fleet.hosts[1]
            let started = ContinuousClock.now
            let result = try await withCheckedThrowingContinuation { continuation in
                Thread { continuation.resume(with: Result { try host.run(["session", "autologin", key.service, key.account]) }) }.start()
            }
            let took = ContinuousClock.now - started
            print("fleet lease wait through the CLI: answered after \(took), exit \(result.status)")
            #expect(result.status == 0, "exit \(result.status) after \(took): \(result.stderr)")
            #expect(!result.stderr.contains("did not answer in time"), "\(result.stderr)")
            #expect(try await provider.refreshesPerToken().values.sorted() == [2], "the one refresh token, sent twice")
        }
    }
}
