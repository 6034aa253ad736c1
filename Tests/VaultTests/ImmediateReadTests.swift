import Foundation
import GRDB
import NIOPosix
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

/// The immediate reads (`retrieveNow`, `listNow`): they answer what the async reads would, and
/// leave to the async reads (return nil) everything that needs a write or a re-verification, so a
/// rollback is still reported, on real SQLite files.
@Suite(.timeLimit(.minutes(20))) struct ImmediateReadTests {
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

    /// A retrieve keeps the metadata it opened (``OpenedMetadataCache``), and uses it only for
    /// a row byte for byte the same: a row whose sealed metadata was changed in place (same
    /// revision) still fails its integrity check, a new revision is opened afresh, and the original
    /// bytes put back open again.
    @Test func metadataOpenedBeforeIsUsedOnlyForTheSameSealedBytes() async throws {
        let test = try await TestVault()
        let key = try ItemKey(service: "s", account: "a")
        try await test.vault.store(secure("token"), service: "s", account: "a", options: try StoreOptions(label: "first"))
        #expect(try test.vault.retrieveNow(key)?.metadata.label == "first")
        #expect(try test.vault.retrieveNow(key)?.metadata.label == "first")

        let original: Data = try test.tamper { db in try #require(try Data.fetchOne(db, sql: "SELECT metadata FROM items")) }
        var flipped = original
        flipped[flipped.count - 1] ^= 0x01
        try test.tamper { db in try db.execute(sql: "UPDATE items SET metadata = ?", arguments: [flipped]) }
        let error = #expect(throws: VaultError.self) { try test.vault.retrieveNow(key) }
        #expect(error?.code == .integrityFailure)

        try test.tamper { db in try db.execute(sql: "UPDATE items SET metadata = ?", arguments: [original]) }
        #expect(try test.vault.retrieveNow(key)?.metadata.label == "first")

        try await test.vault.store(secure("token 2"), service: "s", account: "a", options: try StoreOptions(label: "second"))
        let now = try #require(try test.vault.retrieveNow(key))
        #expect(now.metadata.label == "second")
        #expect(now.secret.constantTimeEquals(Array("token 2".utf8)))
    }

    /// Status's key source kinds are decoded once per header: a header with other bytes (here put
    /// in behind the vault's back: a second vault's, made with a key file) is decoded afresh.
    @Test func keySourceKindsFollowTheHeadersBytes() async throws {
        let test = try await TestVault()
        #expect(try test.vault.keySourceKindsNow() == ["passphrase"])
        #expect(try test.vault.keySourceKindsNow() == ["passphrase"])

        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        defer { try? storage.close() }
        _ = try await EncryptedVault.create(storage: storage, threadPool: .singleton, keySource: .keyFile(SecureBytes(count: 32) { _ in }))
        let header = try #require(try storage.readHeader())
        try test.tamper { db in try db.execute(sql: "UPDATE vault_header SET body = ? WHERE id = 1", arguments: [Data(header)]) }
        #expect(try test.vault.keySourceKindsNow() == ["keyfile"])
    }

    @Test func aStateChangedBehindTheVaultsBackIsNeverTrustedByAnImmediateRead() async throws {
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

extension ImmediateReadTests {
    @Test func aLongListIsLeftToTheAsyncPath() async throws {
        let test = try await TestVault()
        for index in 0...EncryptedVault.maximumRowsListedNow {
            try await test.vault.store(secure("s"), service: "s", account: "a\(index)")
        }
        #expect(try test.vault.listNow(service: nil) == nil)
        #expect(try await test.vault.list().count == EncryptedVault.maximumRowsListedNow + 1)
    }
}
