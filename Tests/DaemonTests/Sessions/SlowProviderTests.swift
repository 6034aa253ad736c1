import Foundation
import Synchronization
import TestSupport
import Testing
import Varlink
import VaultClient
import VaultCore
import VaultOAuthHTTP
import VaultTesting
@testable import VaultSession

extension DaemonSuite {
    /// A slow provider can neither stretch a refresh past its deadline nor hold a logout.
    @Suite struct SlowProviderTests {
        /// The provider sends its answer one byte every 2 s (60 s in all); a timeout between bytes
        /// would never fire, so only a total deadline ends the request. The
        /// deadline is the one the daemon's transport has (``HTTPClientTransport/defaultTimeout``),
        /// on a clock the test moves: the request is still running 0.1 s before it, and cut off at it.
        @Test func aProviderTricklingOneByteEveryTwoSecondsIsCutOffAtTheDeadlineAsOffline() async throws {
            let world = try await SessionProviderTests.World()
            try await world.signIn()
            let deadlines = ManualSleepClock()
            let time = ManualClock(mirror: deadlines.reach)
            let sessions = try SessionManager(store: world.vault, transport: HTTPClientTransport(clock: deadlines),
                                          clock: world.clock, random: { 0.5 })
            world.clock.advance(by: 3700)
            try await world.provider.control("/test/trickle", ["count": 1, "interval": 2, "bytes": 30])

            let finished = Atomic(false)
            let refresh = Task {
                defer { finished.store(true, ordering: .sequentiallyConsistent) }
                return try await sessions.refresh(world.key)
            }
            // Waits until the request's deadline is armed and the provider has the request: a deadline
            // armed before the request is sent would cut it off unsent, and the trickle would then
            // answer the next refresh instead.
            try await waitUntil("the refresh to arm its deadline") { deadlines.sleeping == 1 }
            let arrived = ContinuousClock.now + .seconds(600)
            while try await world.provider.refreshRequests() == 0 && ContinuousClock.now < arrived {
                try await Task.sleep(for: .milliseconds(5))
            }
            try #require(try await world.provider.refreshRequests() == 1, "the refresh never reached the provider")
            let deadline = HTTPClientTransport.defaultTimeout
            time.set(to: time.now.addingTimeInterval(deadline - 0.1))
            // Moving the clock ends every sleep due by then at once: the deadline is still ahead.
            let finishedEarly = finished.load(ordering: .sequentiallyConsistent)
            #expect(deadlines.sleeping == 1 && !finishedEarly, "the request was cut off before its \(deadline) s deadline")
            time.set(to: time.now.addingTimeInterval(0.1))
            let result = try await refresh.value
            guard case .offline(nil, let reason) = result else { Issue.record("expected offline, got \(result)"); return }
            #expect(reason.contains("did not answer within \(Int(deadline)) s"), "\(reason)")
            #expect(try await world.stored() != nil, "a slow provider deleted the login")
            // The provider is fine again: the next attempt goes through.
            #expect(try await sessions.refresh(world.key).outcome == "refreshed")
        }

        /// Through the daemon: the provider holds its (already rotated) answer 8 s; a Logout sent
        /// meanwhile returns before the refresh does, and the late answer neither brings the login back nor leaves
        /// its new tokens alive.
        @Test func aLogoutDuringAHeldRefreshReturnsBeforeTheRefreshAndTheLoginStaysGone() async throws {
            let world = try SessionDaemonTests.World()
            defer { world.cli.stopDaemon() }
            try await world.signIn()
            world.clock.advance(by: 3600)
            try await world.provider.control("/test/delay", ["seconds": 8])
            // Each SessionClient has one connection and one call at a time: the app refreshing and
            // the app logging out are two clients, as they would be two processes.
            let refresher = world.sessions, sessions = world.sessions, key = world.key
            let refreshed = Atomic(false)
            let refresh = Task {
                defer { refreshed.store(true, ordering: .sequentiallyConsistent) }
                return try await refresher.refresh(key)
            }
            let deadline = Date().addingTimeInterval(600)
            while try await world.provider.refreshResponses(200) == 0 && Date() < deadline { usleep(20_000) }
            #expect(try await world.provider.refreshResponses(200) == 1, "the refresh never reached the provider")

            let logout = try await sessions.logout(key)
            // Compared with the refresh, not with a wall clock: Logout returned while the refresh
            // still waited for the provider's held answer.
            let refreshWasOver = refreshed.load(ordering: .sequentiallyConsistent)
            #expect(!refreshWasOver, "Logout waited for the refresh held by the provider")
            #expect(logout.wasLoggedIn)
            await #expect(throws: VaultError(.notFound, "")) { try await sessions.status(key) }

            let late = try await refresh.value
            #expect(late.outcome == "reauthRequired" && late.grant == nil, "the late refresh answered \(late.outcome)")
            await #expect(throws: VaultError(.notFound, "")) { try await sessions.status(key) }
            #expect(try await sessions.autoLogin(key).outcome == "reauthRequired")
            #expect(try await world.provider.refreshRequests() == 1)
            // Logout revoked the old pair; the late answer's new pair was revoked too (4 requests).
            let revocations = Date().addingTimeInterval(10)
            while try await world.provider.revocationRequests() < 4 && Date() < revocations { usleep(20_000) }
            #expect(try await world.provider.revocationRequests() == 4)
        }
    }
}
