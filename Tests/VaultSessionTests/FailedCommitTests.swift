import Foundation
import Synchronization
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// A refresh whose new tokens cannot be stored: the caller hears the error, and the tokens (perhaps a
/// rotated refresh token) are kept in memory and written before anything else touches the login.
@Suite(.timeLimit(.minutes(20))) struct FailedCommitTests {
    @Test func theRefreshedTokensAreWrittenOnTheNextCall() async throws {
        let failing = FailingStoreSwitch()
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2"), .tokens(access: "A3", refresh: "R3")],
                                   wrap: { FailingCommitStore($0, failing) })
        try await h.signIn()
        h.clock.advance(by: 3601)
        failing.on()
        #expect(await vaultErrorCode { _ = try await h.sessions.autoLogin(h.key) } == .storageFailure)
        #expect(h.transport.requestCount == 1)
        #expect(text(try await h.storedLogin()?.refreshToken) == "R1")

        // Still failing: the call fails again, and R1 (perhaps already rotated away) is not sent again.
        #expect(await vaultErrorCode { _ = try await h.sessions.autoLogin(h.key) } == .storageFailure)
        #expect(h.transport.requestCount == 1)

        failing.off()
        let result = try await h.sessions.autoLogin(h.key)
        #expect(result.accessToken == "A2")
        #expect(h.transport.requestCount == 1)
        let stored = try #require(try await h.storedLogin())
        #expect(text(stored.accessToken) == "A2")
        #expect(text(stored.refreshToken) == "R2")

        h.clock.advance(by: 3601)
        #expect(try await h.sessions.autoLogin(h.key).accessToken == "A3")
        #expect(h.transport.requests.map { $0["refresh_token"] } == ["R1", "R2"])
    }

    @Test func aLogoutAfterAFailedCommitRevokesTheNewTokens() async throws {
        let failing = FailingStoreSwitch()
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2"), .ok, .ok], wrap: { FailingCommitStore($0, failing) })
        try await h.signIn()
        h.clock.advance(by: 3601)
        failing.on()
        _ = try? await h.sessions.autoLogin(h.key)
        failing.off()
        #expect(try await h.sessions.logout(h.key).revoked)
        #expect(h.transport.requests.dropFirst().map { $0["token"] } == ["R2", "A2"])
        #expect(try await h.storedLogin() == nil)
    }
}

final class FailingStoreSwitch: Sendable {
    private let failing = Locked(false)
    func on() { failing.withLock { $0 = true } }
    func off() { failing.withLock { $0 = false } }
    var isOn: Bool { failing.withLock { $0 } }
}

/// Fails every write while its switch is on; reads, deletes and lists pass through.
struct FailingCommitStore: TokenStore {
    let inner: InMemoryTokenStore
    let failing: FailingStoreSwitch
    init(_ inner: InMemoryTokenStore, _ failing: FailingStoreSwitch) {
        self.inner = inner
        self.failing = failing
    }

    func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        if failing.isOn { throw VaultError.storageFailure("disk full (simulated)") }
        try await inner.store(secret, for: key, options: options)
    }
    func retrieve(_ key: ItemKey) async throws -> RetrievedItem { try await inner.retrieve(key) }
    func delete(_ key: ItemKey) async throws { try await inner.delete(key) }
    func list(service: String?) async throws -> [ItemMetadata] { try await inner.list(service: service) }
}
