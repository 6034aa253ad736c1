import Foundation
import NIOPosix
import SortedVault
import Testing
import TestSupport
import VaultTesting

extension DaemonSuite {
    /// `VaultLogin` over the socket (`SessionClient` as the `LoginService`), against a real daemon
    /// and the real OAuth2 provider, with the daemon on the test's manual clock.
    @Suite struct SortedVaultDaemonTests {
        typealias World = SessionDaemonTests.World

        static func login(_ world: World) throws -> VaultLogin {
            try VaultLogin(service: world.key.service, account: world.key.account, in: world.sessions, clock: world.clock)
        }

        @Test func theAccessTokenIsRefreshedSilentlyAfterExpiryThenARevokedLoginSaysSignInAgain() async throws {
            let world = try World()
            defer { world.cli.stopDaemon() }
            let login = try Self.login(world)
            await #expect(throws: SortedVaultError.signInAgain(.noSession)) { try await login.accessToken() }
            try await world.signIn()
            let first = try await login.accessToken()
            #expect(try await login.accessToken() == first)
            #expect(try await world.provider.refreshRequests() == 0)
            world.clock.advance(by: 3600)
            let second = try await login.accessToken()
            #expect(second != first)
            #expect(try await world.provider.refreshRequests() == 1)
            #expect(try await world.provider.isActive(second))
            let status = try #require(try await login.status())
            #expect(status.state == "valid" && status.providerKind == "oauth2" && status.hasRefreshToken)
            try await world.provider.revokeAll()
            world.clock.advance(by: 3600)
            await #expect(throws: SortedVaultError.signInAgain(.refreshRejected)) { try await login.accessToken() }
            #expect(try await login.status() == nil)
        }

        @Test func eventsStartWithTheCurrentStateThenFollowTheLogin() async throws {
            let world = try World()
            defer { world.cli.stopDaemon() }
            let login = try Self.login(world)
            var events = login.events.makeAsyncIterator()
            #expect(try await events.next() == .current(nil))
            try await world.signIn()
            guard case .changed(let saved)? = try await events.next() else { Issue.record("no saved event"); return }
            #expect(saved.kind == .saved && saved.key == world.key)
            try await login.logout()
            guard case .changed(let loggedOut)? = try await events.next() else { Issue.record("no loggedOut event"); return }
            #expect(loggedOut.kind == .loggedOut)

            var again = login.events.makeAsyncIterator()
            #expect(try await again.next() == .current(nil))
            try await world.signIn()
            _ = try await again.next()
            var current = login.events.makeAsyncIterator()
            guard case .current(let status?)? = try await current.next() else { Issue.record("no current state"); return }
            #expect(status.state == "valid")
        }

        /// A watch waits on the event loop: with a pool of one thread, calls still answer while
        /// several watches are open (a watch that parked a pool thread would hold the only one).
        @Test func watchesHoldNoPoolThread() async throws {
            let world = try World()
            defer { world.cli.stopDaemon() }
            let pool = NIOThreadPool(numberOfThreads: 1)
            pool.start()
            let sessions = SessionClient(socketPath: world.cli.socket, timeout: .seconds(20), threadPool: pool)
            var watches: [AsyncThrowingStream<SessionEvent, any Error>] = []
            for _ in 0..<3 { watches.append(try await sessions.watch(service: world.key.service, account: nil)) }
            try await world.signIn()
            guard case .valid = try await sessions.autoLogin(world.key) else { Issue.record("expected valid"); return }
            for index in watches.indices {
                var events = watches[index].makeAsyncIterator()
                #expect(try await events.next()?.kind == .saved)
            }
            watches.removeAll()
            try await pool.shutdownGracefully()
        }

        @Test func aWatchEndsWithUnavailableWhenTheDaemonStops() async throws {
            let world = try World()
            let login = try Self.login(world)
            var events = login.events.makeAsyncIterator()
            #expect(try await events.next() == .current(nil))
            world.cli.stopDaemon()
            let error = try await #require(throws: VaultError.self) { _ = try await events.next() }
            #expect(error.code == .unavailable)
        }
    }
}
