import Foundation
import GRDB
import NIOPosix
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultOAuthHTTP
import VaultSQLite
import VaultTesting
import TestSupport
@testable import VaultSession

extension DaemonSuite {
    /// The session manager on the real parts — an encrypted SQLite vault file, URLSession, and a real
    /// OAuth2 provider (django-oauth-toolkit) on 127.0.0.1 — with time moved by a manual clock.
    @Suite struct SessionProviderTests {
        /// One world per test: a fresh vault file, a provider, and a manager over them.
        final class World: @unchecked Sendable {
            let directory: String
            let storage: SQLiteSealedStorage
            let vault: EncryptedVault
            let clock = ManualClock(start: Date())
            let provider: OAuthTestProvider
            let sessions: SessionManager
            let key = try! ItemKey(service: "com.sorted.api", account: "ada")

            init() async throws {
                directory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-session-\(UUID().uuidString.prefix(8))").path
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                storage = try SQLiteSealedStorage(path: directory + "/vault.db")
                vault = try await EncryptedVault.create(storage: storage, threadPool: .singleton, keySource: .keyFile(SecureBytes(randomCount: 32)), clock: clock)
                provider = try OAuthTestProvider()
                sessions = try SessionManager(store: vault, transport: HTTPClientTransport(timeout: 5), clock: clock, random: { 0.5 })
            }

            deinit {
                try? storage.close()
                try? FileManager.default.removeItem(atPath: directory)
            }

            /// Signs in at the provider and saves the login; returns the token response.
            @discardableResult
            func signIn(revocation: Bool = true) async throws -> [UInt8] {
                let response = try await provider.signIn()
                try await sessions.save(try TokenResponse(json: response), provider: try provider.provider(revocation: revocation), for: key)
                return response
            }

            /// The login as stored in the vault file.
            func stored() async throws -> LoginSession? {
                do {
                    return try LoginSession(sealedRecord: try await vault.retrieve(try SessionItems.item(for: key)).secret)
                } catch let error as VaultError where error.code == .notFound {
                    return nil
                }
            }

            /// The bytes of the vault's files: `.db`, `-wal`, `-shm`.
            func dataFiles() -> [UInt8] {
                ["", "-wal", "-shm"].flatMap { suffix in
                    FileManager.default.contents(atPath: directory + "/vault.db" + suffix).map(Array.init) ?? []
                }
            }
        }

        @Test func aValidAccessTokenIsAnsweredWithNoRequestToTheProvider() async throws {
            let world = try await World()
            let response = try await world.signIn()
            let before = try await world.provider.stats()
            for _ in 0..<20 {
                let result = try await world.sessions.autoLogin(world.key)
                guard case .valid(let grant) = result else { Issue.record("expected valid, got \(result)"); return }
                #expect(grant.accessToken.constantTimeEquals(Array(response.jsonField("access_token")!.utf8)))
            }
            world.clock.advance(by: 3600 - 61)  // still valid for more than min_valid (60 s)
            #expect(try await world.sessions.autoLogin(world.key).outcome == "valid")
            #expect(try await world.provider.stats() == before, "AutoLogin with a valid token reached the provider")
        }

        @Test func anExpiringTokenIsRefreshedTheOldRefreshTokenDiesAndTheNewOneIsStored() async throws {
            let world = try await World()
            let response = try await world.signIn()
            let oldRefresh = response.jsonField("refresh_token")!
            world.clock.advance(by: 3600 - 30)  // valid for 30 s: less than min_valid

            let result = try await world.sessions.autoLogin(world.key)
            guard case .refreshed(let grant) = result else { Issue.record("expected refreshed, got \(result)"); return }
            #expect(try await world.provider.refreshRequests() == 1)
            let newAccess = grant.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            #expect(newAccess != response.jsonField("access_token"))
            #expect(try await world.provider.isActive(newAccess))

            // Stored durably before the answer: the vault file holds the rotated refresh token.
            let stored = try #require(try await world.stored())
            #expect(stored.accessToken.constantTimeEquals(Array(newAccess.utf8)))
            #expect(!(stored.refreshToken?.constantTimeEquals(Array(oldRefresh.utf8)) ?? true), "the rotated refresh token was not stored")
            #expect(stored.lastRefreshedAt != nil)
            // The stored refresh token is the live one: a forced refresh with it succeeds…
            #expect(try await world.sessions.refresh(world.key).outcome == "refreshed")
            // …and the provider refuses the old one.
            let (status, error) = try await world.provider.tryRefresh(oldRefresh)
            #expect(status == 400 && error == "invalid_grant")
        }

        @Test func clientSecretPostAuthenticatesAsWellAsBasic() async throws {
            let world = try await World()
            let response = try await world.provider.signIn()
            try await world.sessions.save(try TokenResponse(json: response), provider: try world.provider.provider(authentication: .post),
                                          for: world.key)
            #expect(try await world.sessions.refresh(world.key).outcome == "refreshed")
            #expect(try await world.sessions.logout(world.key).revoked)
            #expect(try await world.provider.isActive(response.jsonField("access_token")!) == false)
        }

        @Test func providerDownIsOfflineWithNothingDeletedAndBackIsRefreshed() async throws {
            let world = try await World()
            let response = try await world.signIn()
            world.clock.advance(by: 3600 - 30)
            world.provider.stop()

            // Still valid for 30 s: offline, with the cached token.
            let early = try await world.sessions.autoLogin(world.key)
            guard case .offline(let cached?, _) = early else { Issue.record("expected offline with a token, got \(early)"); return }
            #expect(cached.accessToken.constantTimeEquals(Array(response.jsonField("access_token")!.utf8)))

            // Expired: offline without a token, and the login is still stored.
            world.clock.advance(by: 60)
            let late = try await world.sessions.autoLogin(world.key)
            guard case .offline(nil, _) = late else { Issue.record("expected offline without a token, got \(late)"); return }
            let kept = try #require(try await world.stored(), "the login was deleted while the provider was down")
            #expect(kept.refreshToken?.constantTimeEquals(Array(response.jsonField("refresh_token")!.utf8)) == true)

            // Back, and past the hold-back: refreshed.
            try world.provider.start()
            world.clock.advance(by: 301)
            #expect(try await world.sessions.autoLogin(world.key).outcome == "refreshed")
        }

        @Test func invalidGrantMeansSignInAgainAndTheLoginIsWiped() async throws {
            let world = try await World()
            try await world.signIn()
            let events = world.sessions.events()
            try await world.provider.control("/test/revoke-all")
            world.clock.advance(by: 3600)

            let result = try await world.sessions.autoLogin(world.key)
            guard case .reauthRequired(.refreshRejected) = result else { Issue.record("expected reauthRequired, got \(result)"); return }
            #expect(try await world.stored() == nil)
            #expect(try await world.vault.list().isEmpty)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next()?.kind == .reauthRequired)
            // And it stays that way, with no more requests.
            let requests = try await world.provider.refreshRequests()
            guard case .reauthRequired(.noSession) = try await world.sessions.autoLogin(world.key) else { Issue.record("login came back"); return }
            #expect(try await world.provider.refreshRequests() == requests)
        }

        @Test func logoutRevokesAtTheProviderAndLeavesNoTraceInTheStoreOrTheFiles() async throws {
            let world = try await World()
            let response = try await world.signIn()
            let access = response.jsonField("access_token")!, refresh = response.jsonField("refresh_token")!
            #expect(try await world.provider.isActive(access))
            // The login's sealed record, as it lies in the file now.
            let queue = try DatabaseQueue(path: world.directory + "/vault.db")
            let sealed = try await queue.read { db in try Data.fetchAll(db, sql: "SELECT secret FROM items") }
            try queue.close()
            #expect(sealed.count == 1)

            let result = try await world.sessions.logout(world.key)
            #expect(result == LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false))
            #expect(try await world.provider.isActive(access) == false)
            #expect(try await world.provider.tryRefresh(refresh).1 == "invalid_grant")
            #expect(try await world.vault.list().isEmpty)
            #expect(try world.storage.count() == 0, "a login or revocation record is left in the store")
            let files = world.dataFiles()
            for record in sealed {
                #expect(!files.contains(subsequence: Array(record)), "the login's ciphertext is still in the data files")
            }
            for token in [access, refresh, "com.sorted.api"] {
                #expect(!files.contains(subsequence: Array(token.utf8)))
            }
            // Idempotent.
            #expect(try await world.sessions.logout(world.key) == LogoutResult(wasLoggedIn: false, revoked: false, revocationQueued: false))
        }

        @Test func anOfflineLogoutWipesAtOnceAndRevokesWhenTheProviderIsBack() async throws {
            let world = try await World()
            let response = try await world.signIn()
            let access = response.jsonField("access_token")!
            world.provider.stop()

            let result = try await world.sessions.logout(world.key)
            #expect(result == LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: true))
            #expect(try await world.stored() == nil)
            #expect(try world.storage.count() == 1, "the queued revocation is the only record left")
            let wake = try #require(world.sessions.nextWakeUp())

            try world.provider.start()
            #expect(try await world.provider.isActive(access), "revoked before the provider was reached?")
            world.clock.set(to: wake)
            await world.sessions.runDueWork()
            #expect(try await world.provider.isActive(access) == false)
            #expect(try world.storage.count() == 0)
            #expect(await world.sessions.queuedRevocationCount == 0)
        }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        let first = needle[0]
        var index = startIndex
        while let found = self[index...].firstIndex(of: first), found + needle.count <= endIndex {
            if self[found..<(found + needle.count)].elementsEqual(needle) { return true }
            index = found + 1
        }
        return false
    }
}
