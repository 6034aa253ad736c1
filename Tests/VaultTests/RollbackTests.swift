import Foundation
import GRDB
import NIOPosix
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

/// Putting back an older copy of a row, of the state, or of the whole file: refused with
/// an `.integrityFailure` that names the rollback and the recovery, on real SQLite files.
@Suite(.timeLimit(.minutes(20))) struct RollbackTests {
    /// Every column of every item row, the state row and its entries, as an attacker would copy them with sqlite3.
    static func snapshot(_ test: TestVault) throws -> (items: [Row], state: Row?, entries: [Row]) {
        try test.tamper { db in
            (try Row.fetchAll(db, sql: "SELECT * FROM items ORDER BY id"), try Row.fetchOne(db, sql: "SELECT * FROM vault_state"),
             try Row.fetchAll(db, sql: "SELECT * FROM vault_entries"))
        }
    }

    static func restore(_ test: TestVault, items: [Row], state: Row? = nil, entries: [Row]? = nil) throws {
        try test.tamper { db in
            for row in items {
                try db.execute(sql: """
                    INSERT OR REPLACE INTO items (id, lookup, revision, expires_at, metadata, secret) VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [row["id"], row["lookup"], row["revision"], row["expires_at"], row["metadata"], row["secret"]])
            }
            if let state {
                try db.execute(sql: "INSERT OR REPLACE INTO vault_state (id, vault_id, generation, count, tag) VALUES (1, ?, ?, ?, ?)",
                               arguments: [state["vault_id"], state["generation"], state["count"], state["tag"]])
            }
            if let entries {
                try db.execute(sql: "DELETE FROM vault_entries")
                for row in entries {
                    try db.execute(sql: "INSERT INTO vault_entries (lookup, revision, expires_at) VALUES (?, ?, ?)",
                                   arguments: [row["lookup"], row["revision"], row["expires_at"]])
                }
            }
        }
    }

    static func failure(_ body: () async throws -> some Any) async -> VaultError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? VaultError
        }
    }

    @Test func anOlderRowPutBackWithItsRevisionMetadataAndSecretIsRefused() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("revoked token"), service: "s", account: "a")
        try await test.vault.store(secure("bystander"), service: "s", account: "b")
        let old = try Self.snapshot(test).items.filter { ($0["revision"] as Int64) == 1 }
        try await test.vault.store(secure("current token"), service: "s", account: "a")
        try Self.restore(test, items: [old[0]])

        let error = try #require(await Self.failure { try await test.vault.retrieve(service: "s", account: "a") })
        #expect(error.code == .integrityFailure)
        #expect(error.reason.contains("rollback detected") && error.reason.contains("recover --accept-rollback"))
        #expect(try await test.vault.retrieve(service: "s", account: "b").secret.constantTimeEquals(Array("bystander".utf8)))
        #expect(await vaultErrorCode { try await test.vault.list() } == .integrityFailure)
        // A restart does not launder it.
        let (storage, reopened) = try await test.reopen()
        defer { try? storage.close() }
        try await reopened.unlock(.passphrase(secure(TestVault.passphrase)))
        #expect(await vaultErrorCode { try await reopened.retrieve(service: "s", account: "a") } == .integrityFailure)
        // The documented item-level repair: delete it by name, store it again.
        try await reopened.delete(service: "s", account: "a")
        #expect(try await reopened.list().map(\.account) == ["b"])
        try await reopened.store(secure("signed in again"), service: "s", account: "a")
        #expect(try await reopened.retrieve(service: "s", account: "a").secret.constantTimeEquals(Array("signed in again".utf8)))
    }

    @Test func aDeletedRowPutBackOrARowDeletedBehindTheVaultsBackIsReported() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("logged out"), service: "s", account: "gone")
        try await test.vault.store(secure("kept"), service: "s", account: "kept")
        let rows = try Self.snapshot(test).items
        try await test.vault.delete(service: "s", account: "gone")
        try Self.restore(test, items: [rows[0]])
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "gone") } == .integrityFailure)

        try test.tamper { db in try db.execute(sql: "DELETE FROM items") }
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "kept") } == .integrityFailure,
                "a row deleted outside the vault must not read as notFound")
    }

    @Test func theRowAndTheStatePutBackTogetherAreRefusedByTheGeneration() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("revoked token"), service: "s", account: "a")
        let old = try Self.snapshot(test)
        try await test.vault.store(secure("current token"), service: "s", account: "a")
        try Self.restore(test, items: old.items, state: old.state, entries: old.entries)

        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .integrityFailure,
                "the running vault saw a newer generation")
        let error = try #require(await Self.failure { try await test.reopen() })
        #expect(error.code == .integrityFailure)
        #expect(error.reason.contains("older copy"))
    }

    @Test func anEntryOfTheStateChangedAloneIsCaughtByTheTag() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("old"), service: "s", account: "a")
        let old = try Self.snapshot(test)
        try await test.vault.store(secure("new"), service: "s", account: "a")
        try Self.restore(test, items: old.items, entries: old.entries)  // row and entry, not the state row
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .integrityFailure,
                "the running vault checks rows against the state it authenticated")
        let (storage, reopened) = try await test.reopen()
        defer { try? storage.close() }
        let error = try #require(await Self.failure { try await reopened.unlock(.passphrase(secure(TestVault.passphrase))) })
        #expect(error.code == .integrityFailure)
        #expect(await reopened.isLocked, "a vault whose state fails stays locked")
    }

    @Test func anOlderCopyOfTheWholeFileIsRefusedAtOpen() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("refresh token"), service: "login", account: "ada")
        let backup = test.directory + "/backup"
        try FileManager.default.createDirectory(atPath: backup, withIntermediateDirectories: false)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: test.databasePath + suffix) {
            try FileManager.default.copyItem(atPath: test.databasePath + suffix, toPath: backup + "/vault.db" + suffix)
        }
        try await test.vault.delete(service: "login", account: "ada")  // a logout
        try test.storage.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: test.databasePath + suffix) }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: backup + "/vault.db" + suffix) {
            try FileManager.default.copyItem(atPath: backup + "/vault.db" + suffix, toPath: test.databasePath + suffix)
        }

        let error = try #require(await Self.failure { try await test.reopen() })
        #expect(error.code == .integrityFailure)
        #expect(error.reason.contains("rollback detected"))

        // The documented recovery accepts the copy as it is, and later opens are normal again.
        let storage = try SQLiteSealedStorage(path: test.databasePath)
        let recovering = try await EncryptedVault.openForRecovery(storage: storage, threadPool: .singleton, clock: test.clock, generationRecord: test.record)
        try await recovering.unlock(.passphrase(secure(TestVault.passphrase)), acceptingRollback: true)
        #expect(try await recovering.retrieve(service: "login", account: "ada").secret.constantTimeEquals(Array("refresh token".utf8)))
        try storage.close()
        let (again, reopened) = try await test.reopen()
        defer { try? again.close() }
        try await reopened.unlock(.passphrase(secure(TestVault.passphrase)))
        #expect(try await reopened.list().count == 1)
    }

    @Test func normalRestartsAndLockedPurgesKeepTheVaultOpening() async throws {
        let test = try await TestVault()
        for round in 0..<3 {
            try await test.vault.store(secure("token \(round)"), service: "s", account: "a",
                                       options: try StoreOptions(expiresAt: test.clock.now.addingTimeInterval(60)))
            try await test.vault.store(secure("keep \(round)"), service: "s", account: "k\(round)")
            let (storage, reopened) = try await test.reopen()
            await test.vault.lock()
            test.clock.advance(by: 61)
            #expect(try await reopened.purgeExpired() == 1, "purged while locked")
            try await reopened.unlock(.passphrase(secure(TestVault.passphrase)))
            #expect(try await reopened.list().map(\.account) == (0...round).map { "k\($0)" })
            try storage.close()
            try await test.vault.unlock(.passphrase(secure(TestVault.passphrase)))
        }
        let recorded = try #require(try test.record.read())
        #expect(recorded.generation == 10, "one for the creation; a round: two stores, and the unlock that drops the expired entry")
    }

    @Test func expiriesThatDoNotSurviveADateRoundTripExactlyStillRead() async throws {
        // Date ↔ seconds-since-1970 is not exact for every value; the state must agree with the rows anyway.
        let test = try await TestVault()
        let base = test.clock.now.addingTimeInterval(3600)
        let inexact = (0..<200).filter { i in
            let date = base.addingTimeInterval(Double(i) * 0.000_123_4)
            return Date(timeIntervalSince1970: date.timeIntervalSince1970) != date
        }
        #expect(!inexact.isEmpty, "the test needs expiries whose round trip is inexact")
        for i in 0..<200 {
            try await test.vault.store(secure("t\(i)"), service: "s", account: "e\(i)",
                                       options: try StoreOptions(expiresAt: base.addingTimeInterval(Double(i) * 0.000_123_4)))
        }
        for i in 0..<200 { _ = try await test.vault.retrieve(service: "s", account: "e\(i)") }
        let (storage, reopened) = try await test.reopen()
        defer { try? storage.close() }
        try await reopened.unlock(.passphrase(secure(TestVault.passphrase)))
        for i in 0..<200 { _ = try await reopened.retrieve(service: "s", account: "e\(i)") }
        #expect(try await reopened.list().count == 200)
    }

    @Test func theFrozenV1VaultGetsItsStateAtItsFirstUnlockAndIsProtectedFromThen() async throws {
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent("v1-passphrase.sqlite").path, toPath: directory + "/vault.db")
        let record = GenerationFile(path: directory + "/state/generation")
        let storage = try SQLiteSealedStorage(path: directory + "/vault.db")
        defer { try? storage.close() }
        let vault = try await EncryptedVault(storage: storage, threadPool: .singleton, clock: ManualClock(), generationRecord: record)
        #expect(try record.read() == nil)
        try await vault.unlock(.passphrase(secure("correct horse battery staple")))
        #expect(try record.read()?.generation == 1)
        let items = try await vault.list()
        #expect(!items.isEmpty)
        // From now on a deleted state is a rollback, not a fresh start.
        let queue = try DatabaseQueue(path: directory + "/vault.db")
        try await queue.write { db in try db.execute(sql: "DELETE FROM vault_state") }
        try queue.close()
        #expect(await vaultErrorCode { try await EncryptedVault(storage: storage, threadPool: .singleton, clock: ManualClock(), generationRecord: record) } == .integrityFailure)
    }
}
