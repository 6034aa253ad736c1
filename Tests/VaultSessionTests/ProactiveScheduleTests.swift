import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting
import InMemoryLogging
import Logging

/// `nextWakeUp()` says when `runDueWork()` has something to do; nothing happens before it.
@Suite(.timeLimit(.minutes(20))) struct ProactiveScheduleTests {
    @Test func proactiveRefreshHappensBeforeExpiry() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2")])
        try await h.signIn()
        let expiry = h.start.addingTimeInterval(3600)
        let wake = try #require(h.sessions.nextWakeUp())
        // minValid 60 + refreshAhead 60 + half of refreshJitter 30.
        #expect(wake == expiry.addingTimeInterval(-135))
        #expect(wake < expiry.addingTimeInterval(-h.configuration.minValid))

        h.clock.set(to: wake.addingTimeInterval(-1))
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 0)

        h.clock.set(to: wake)
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 1)
        #expect(h.transport.requests.first?["refresh_token"] == "R1")
        #expect(text(try await h.storedLogin()?.accessToken) == "A2")
        #expect(h.sessions.nextWakeUp() == wake.addingTimeInterval(3600 - 135))
        // The caller now finds a fresh token, with no request of its own.
        #expect(try await h.sessions.autoLogin(h.key).outcome == "valid")
        #expect(h.transport.requestCount == 1)
    }

    @Test func aFailedProactiveRefreshIsRetriedAfterTheHoldBack() async throws {
        let h = try SessionHarness([.unreachable, .tokens(access: "A2")])
        try await h.signIn()
        let wake = try #require(h.sessions.nextWakeUp())
        h.clock.set(to: wake)
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 1)
        #expect(text(try await h.storedLogin()?.refreshToken) == "R1")
        #expect(h.sessions.nextWakeUp() == wake.addingTimeInterval(1.5))
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 1)
        h.clock.advance(by: 1.5)
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 2)
        #expect(text(try await h.storedLogin()?.accessToken) == "A2")
    }

    /// A provider whose tokens live less than the refresh lead (150 s here) must not be asked again
    /// the moment each refresh lands: the schedule stays in the future.
    @Test func aShortLivedTokenIsNotRefreshedInALoop() async throws {
        let h = try SessionHarness((2...5).map { .tokens(access: "A\($0)", expiresIn: 100) })
        try await h.signIn(expiresIn: 100)
        for round in 1...3 {
            let wake = try #require(h.sessions.nextWakeUp())
            #expect(wake > h.clock.now, "round \(round): the next refresh is already due")
            #expect(wake < h.clock.now.addingTimeInterval(100), "round \(round): scheduled after expiry")
            await h.sessions.runDueWork()
            #expect(h.transport.requestCount == round - 1)
            h.clock.set(to: wake)
            await h.sessions.runDueWork()
            #expect(h.transport.requestCount == round)
        }
    }

    @Test func aTokenThatExpiresAtOnceIsRefreshedAtMostEvery30Seconds() async throws {
        let h = try SessionHarness((2...4).map { .tokens(access: "A\($0)", expiresIn: 0) })
        try await h.signIn(expiresIn: 0)
        for round in 1...2 {
            let wake = try #require(h.sessions.nextWakeUp())
            #expect(wake == h.clock.now.addingTimeInterval(30), "round \(round)")
            await h.sessions.runDueWork()
            #expect(h.transport.requestCount == round - 1)
            h.clock.set(to: wake)
            await h.sessions.runDueWork()
            await h.sessions.runDueWork()
            #expect(h.transport.requestCount == round)
        }
    }

    @Test func withProactiveRefreshOffNothingIsScheduled() async throws {
        let h = try SessionHarness([.tokens(access: "A2")], configuration: .init(proactiveRefresh: false))
        try await h.signIn()
        #expect(h.sessions.nextWakeUp() == nil)
        h.clock.advance(by: 3600 - 1)
        await h.sessions.runDueWork()
        #expect(h.transport.requestCount == 0)
        #expect(text(try await h.storedLogin()?.accessToken) == "A1")
    }

    @Test func theAbsoluteLifetimeWipesTheLoginWithAnExpiredEvent() async throws {
        let h = try SessionHarness(configuration: .init(proactiveRefresh: false))
        try await h.signIn(maximumLifetime: 600)
        let wake = try #require(h.sessions.nextWakeUp())
        #expect(wake == h.start.addingTimeInterval(600))
        h.clock.set(to: wake.addingTimeInterval(-1))
        await h.sessions.runDueWork()
        #expect(try await h.storedLogin() != nil)

        h.clock.set(to: wake)
        let seen = try await events(of: h.sessions, provider: h.provider) {
            await h.sessions.runDueWork()
        }
        #expect(seen.map(\.kind) == [.expired])
        #expect(seen.first?.key == h.key)
        #expect(try await h.storedLogin() == nil)
        #expect(h.transport.requestCount == 0)
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .noSession)
    }

    @Test func theRefreshTokensExpiryWipesTheLoginBeforeAnyRefresh() async throws {
        let h = try SessionHarness()
        try await h.signIn(expiresIn: 3600, refreshExpiresIn: 1800)
        let wake = try #require(h.sessions.nextWakeUp())
        #expect(wake == h.start.addingTimeInterval(1800))
        h.clock.set(to: wake)
        let seen = try await events(of: h.sessions, provider: h.provider) {
            await h.sessions.runDueWork()
        }
        #expect(seen.map(\.kind) == [.expired])
        #expect(try await h.storedLogin() == nil)
        #expect(h.transport.requestCount == 0)
    }

    /// A store that keeps items past their expiry (it ignores `expiresAt`): the manager itself must
    /// notice that the login is over.
    @Test func anEndedLoginStillInTheStoreIsWipedToo() async throws {
        let h = try SessionHarness(configuration: .init(proactiveRefresh: false), wrap: { NoExpiryStore($0) })
        try await h.signIn(maximumLifetime: 600)
        h.clock.advance(by: 600)
        #expect(try await h.storedLogin() != nil)
        var result: AutoLoginResult?
        let seen = try await events(of: h.sessions, provider: h.provider) {
            result = try await h.sessions.autoLogin(h.key)
        }
        #expect(result?.reauthReason == .lifetimeOver)
        #expect(seen.map(\.kind) == [.expired])
        #expect(try await h.storedLogin() == nil)
    }
}

/// Passes everything through but drops expiry dates.
struct NoExpiryStore: TokenStore {
    let inner: InMemoryTokenStore
    init(_ inner: InMemoryTokenStore) { self.inner = inner }

    func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try await inner.store(secret, for: key, options: try StoreOptions(label: options.label, attributes: options.attributes))
    }
    func retrieve(_ key: ItemKey) async throws -> RetrievedItem { try await inner.retrieve(key) }
    func delete(_ key: ItemKey) async throws { try await inner.delete(key) }
    func list(service: String?) async throws -> [ItemMetadata] { try await inner.list(service: service) }
}

/// The daemon's log lies on disk in plaintext while the vault seals every name: proactive work
/// names a login by the pseudonym the daemon gives, at every level, debug included.
@Suite(.timeLimit(.minutes(20))) struct ProactiveWorkLogTests {
    @Test func proactiveRefreshLogsTheServiceByItsPseudonym() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2")])
        var captured = InMemoryLogHandler()
        captured.logLevel = .trace  // every level, debug included
        let handler = captured
        let sessions = try SessionManager(store: h.store, transport: h.transport, clock: h.clock, configuration: h.configuration,
                                      random: SessionHarness.random,
                                      logger: Logger(label: "test") { _ in handler },
                                      logName: { "<name-of:\($0.count)>" })
        _ = try await sessions.save(
            TokenResponse(accessToken: secure("A1"), expiresIn: 3600, refreshToken: secure("R1")), provider: h.provider, for: h.key)
        let wake = try #require(sessions.nextWakeUp())
        h.clock.set(to: wake)
        await sessions.runDueWork()
        #expect(h.transport.requestCount == 1)
        let lines = captured.entries.map { "\($0.message) \($0.metadata)" }
        #expect(lines.contains { $0.contains("proactive session work") && $0.contains("<name-of:\(h.key.service.count)>") })
        #expect(!lines.contains { $0.contains(h.key.service) }, "the daemon's log names the service: \(lines)")
    }

    /// Counts calls from any thread.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() -> Int { lock.withLock { count += 1; return count } }
        var value: Int { lock.withLock { count } }
    }

    /// Every AutoLogin of a fleet daemon reads the login from the store; a wake-up of the background
    /// work is a round with queries of its own, so reading the same tokens again must not wake it,
    /// nor draw the refresh jitter anew.
    @Test func readingTheSameTokensAgainKeepsTheScheduleAndWakesNothing() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2")])
        let draws = Tally()
        // Jitter that differs at every draw, as the system's random does.
        let sessions = try SessionManager(store: h.store, transport: h.transport, clock: h.clock, configuration: h.configuration,
                                          random: { Double(draws.add() % 10) / 10 })
        let wakeUps = Tally()
        sessions.observeSchedule { _ = wakeUps.add() }
        _ = try await sessions.save(
            TokenResponse(accessToken: secure("A1"), expiresIn: 3600, refreshToken: secure("R1")), provider: h.provider, for: h.key)
        #expect(try await sessions.autoLogin(h.key).outcome == "valid")
        let (woken, wake) = (wakeUps.value, sessions.nextWakeUp())
        for _ in 0..<5 {
            h.clock.advance(by: 1)
            #expect(try await sessions.autoLogin(h.key).outcome == "valid")
        }
        #expect(wakeUps.value == woken)
        #expect(sessions.nextWakeUp() == wake)
        // New tokens are a new schedule, later than the old one: the driver, due to wake by the old
        // one, looks again then, so nothing wakes it now.
        h.clock.set(to: h.start.addingTimeInterval(3600 - 30))
        #expect(try await sessions.autoLogin(h.key).outcome == "refreshed")
        #expect(wakeUps.value == woken)
        #expect(try #require(sessions.nextWakeUp()) > h.start.addingTimeInterval(3600))
    }

    /// An app asks "am I still logged in?" before its user ever signed in, often: a login that is
    /// not there moves no wake-up, so the asking must not wake the background work.
    @Test func askingForALoginThatIsNotThereWakesNothing() async throws {
        let h = try SessionHarness([])
        let wakeUps = Tally()
        h.sessions.observeSchedule { _ = wakeUps.add() }
        for _ in 0..<5 {
            let answer = try await h.sessions.autoLogin(h.key)
            guard case .reauthRequired(.noSession) = answer else { Issue.record("got \(answer)"); return }
            _ = try await h.sessions.logout(h.key)
        }
        #expect(wakeUps.value == 0)
        #expect(h.sessions.nextWakeUp() == nil)
    }
}
