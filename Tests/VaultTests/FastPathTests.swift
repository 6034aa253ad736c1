import Foundation
import GRDB
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

/// The synchronous read path (`retrieveNow`, `listNow`): it answers what the async path would, and
/// leaves to the async path (returns nil) everything that needs a write or a re-verification, so a
/// rollback is still reported, on real SQLite files.
@Suite struct FastPathTests {
    @Test func retrieveNowAnswersWhatRetrieveAnswers() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("token"), service: "s", account: "a", options: try StoreOptions(label: "L"))
        let now = try #require(try test.vault.retrieveNow(ItemKey(service: "s", account: "a")))
        let slow = try await test.vault.retrieve(service: "s", account: "a")
        #expect(now.secret.constantTimeEquals(Array("token".utf8)))
        #expect(now.metadata == slow.metadata)
        #expect(try test.vault.listNow(service: nil)?.map(\.account) == ["a"])
    }

    @Test func aMissingItemIsNotFoundAndALockedVaultIsLocked() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("token"), service: "s", account: "a")
        #expect(throws: VaultError.self) { try test.vault.retrieveNow(ItemKey(service: "s", account: "nobody")) }
        await test.vault.lock()
        #expect(test.vault.isLockedNow)
        let error = #expect(throws: VaultError.self) { try test.vault.retrieveNow(ItemKey(service: "s", account: "a")) }
        #expect(error?.code == .locked)
        #expect((#expect(throws: VaultError.self) { try test.vault.listNow(service: nil) })?.code == .locked)
    }

    @Test func anOlderRowPutBackIsLeftToTheAsyncPathWhichReportsTheRollback() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("revoked token"), service: "s", account: "a")
        let old = try RollbackTests.snapshot(test).items
        try await test.vault.store(secure("current token"), service: "s", account: "a")
        try RollbackTests.restore(test, items: old)
        #expect(try test.vault.retrieveNow(ItemKey(service: "s", account: "a")) == nil)
        #expect(try test.vault.listNow(service: nil) == nil)
        let error = try #require(await RollbackTests.failure { try await test.vault.retrieve(service: "s", account: "a") })
        #expect(error.code == .integrityFailure && error.reason.contains("rollback detected"))
    }

    @Test func aStateChangedBehindTheVaultsBackIsNeverTrustedByTheFastPath() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("v1"), service: "s", account: "a")
        let before = try RollbackTests.snapshot(test)
        try await test.vault.store(secure("v2"), service: "s", account: "a")
        // The whole vault put back as it was: rows, entries and state all older, all consistent.
        try RollbackTests.restore(test, items: before.items, state: before.state, entries: before.entries)
        #expect(try test.vault.retrieveNow(ItemKey(service: "s", account: "a")) == nil)
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .integrityFailure)
    }

    @Test func anExpiredItemIsLeftToTheAsyncPathWhichPurgesIt() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("short"), service: "s", account: "a",
                                   options: try StoreOptions(expiresAt: test.clock.now.addingTimeInterval(60)))
        #expect(try test.vault.retrieveNow(ItemKey(service: "s", account: "a")) != nil)
        test.clock.advance(by: 61)
        #expect(try test.vault.retrieveNow(ItemKey(service: "s", account: "a")) == nil)
        #expect(try test.vault.listNow(service: nil) == nil)
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .notFound)
        #expect(try test.vault.listNow(service: nil) == [])
    }

    @Test func aReadDoesNotWaitForAWriteInProgress() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("token"), service: "s", account: "a")
        // Hold the write lock from another connection, as a long write's fsync would.
        let writer = try DatabaseQueue(path: test.databasePath)
        defer { try? writer.close() }
        try writer.inDatabase { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            let item = try test.vault.retrieveNow(ItemKey(service: "s", account: "a"))
            #expect(item?.secret.constantTimeEquals(Array("token".utf8)) == true)
        }
    }
}

extension FastPathTests {
    @Test func aLongListIsLeftToTheAsyncPath() async throws {
        let test = try await TestVault()
        for index in 0...EncryptedVault.maximumRowsListedNow {
            try await test.vault.store(secure("s"), service: "s", account: "a\(index)")
        }
        #expect(try test.vault.listNow(service: nil) == nil)
        #expect(try await test.vault.list().count == EncryptedVault.maximumRowsListedNow + 1)
    }
}
