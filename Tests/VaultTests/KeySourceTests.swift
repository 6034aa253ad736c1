import Foundation
import GRDB
import NIOPosix
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite

@Suite(.timeLimit(.minutes(20))) struct PassphraseTests {
    @Test func wrongPassphraseIsAClearErrorAndLeavesTheFileUnchanged() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("secret"), service: "s", account: "a")
        try test.storage.close()
        let storage = try SQLiteSealedStorage(path: test.databasePath)
        let vault = try await EncryptedVault(storage: storage, threadPool: .singleton, clock: test.clock)
        // The files as the unlock finds them: opening the pool may itself write (GRDB makes sure a
        // non-empty -wal exists), which is not the unlock's doing.
        let files = { try ["", "-wal"].map { try Data(contentsOf: URL(fileURLWithPath: test.databasePath + $0)) } }
        let before = try files()
        do {
            try await vault.unlock(.passphrase(secure("not the passphrase")))
            Issue.record("a wrong passphrase unlocked the vault")
        } catch let error as VaultError {
            #expect(error.code == .wrongPassphrase)
            #expect(error.reason.contains("wrong passphrase"))
            #expect(!error.reason.contains("not the passphrase"))
        }
        #expect(await vault.isLocked)
        #expect(await vaultErrorCode { try await vault.retrieve(service: "s", account: "a") } == .locked)
        let after = try files()
        try storage.close()
        let unchanged = before == after  // compared outside #expect, which would print both files
        #expect(unchanged, "a failed unlock changed the vault files (\(before.map(\.count)) → \(after.map(\.count)) bytes)")
    }

    @Test func vaultWhoseKDFCostsWereRaisedBeyondTheBoundsIsRefused() async throws {
        let test = try await TestVault()
        for (field, value) in [("operations", "11"), ("memoryBytes", "\(UInt64(2) << 30)"), ("operations", "99999999999")] {
            try test.tamper { db in
                var header = try String(data: Data.fetchOne(db, sql: "SELECT body FROM vault_header")!, encoding: .utf8)!
                header = header.replacingOccurrences(of: #""\#(field)":\d+"#, with: "\"\(field)\":\(value)", options: .regularExpression)
                try db.execute(sql: "UPDATE vault_header SET body = ?", arguments: [Data(header.utf8)])
            }
            let storage = try SQLiteSealedStorage(path: test.databasePath)
            defer { try? storage.close() }
            #expect(await vaultErrorCode { try await EncryptedVault(storage: storage, threadPool: .singleton, clock: test.clock) } == .kdfCostOutOfBounds,
                    "raising \(field) to \(value) was not refused")
            await test.vault.lock()
            #expect(await vaultErrorCode { try await test.vault.unlock(.passphrase(secure(TestVault.passphrase))) } == .kdfCostOutOfBounds)
        }
    }

    @Test func loweredKDFCostsDoNotOpenTheVault() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        _ = try await EncryptedVault.create(storage: storage, threadPool: .singleton, keySource: .passphrase(secure("pw"), cost: Argon2Cost(operations: 2, memoryBytes: 16 << 10)))
        let queue = try DatabaseQueue(path: "\(directory)/vault.db")
        try await queue.write { db in
            let header = String(data: try Data.fetchOne(db, sql: "SELECT body FROM vault_header")!, encoding: .utf8)!
                .replacingOccurrences(of: "\"operations\":2", with: "\"operations\":1")
            try db.execute(sql: "UPDATE vault_header SET body = ?", arguments: [Data(header.utf8)])
        }
        try queue.close()
        let vault = try await EncryptedVault(storage: storage, threadPool: .singleton)
        #expect(await vaultErrorCode { try await vault.unlock(.passphrase(secure("pw"))) } == .wrongPassphrase)
    }

    @Test func changingThePassphraseRewrapsWithoutReencryptingItems() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("kept"), service: "s", account: "a")
        let sealedBefore = try test.tamper { db in try Data.fetchOne(db, sql: "SELECT secret FROM items")! }
        try await test.vault.changePassphrase(from: secure(TestVault.passphrase), to: secure("new passphrase"), cost: .unsafeMinimumForTesting)
        let sealedAfter = try test.tamper { db in try Data.fetchOne(db, sql: "SELECT secret FROM items")! }
        #expect(sealedBefore == sealedAfter)

        let (storage, reopened) = try await test.reopen()
        defer { try? storage.close() }
        #expect(await vaultErrorCode { try await reopened.unlock(.passphrase(secure(TestVault.passphrase))) } == .wrongPassphrase)
        try await reopened.unlock(.passphrase(secure("new passphrase")))
        #expect(try await reopened.retrieve(service: "s", account: "a").secret.constantTimeEquals(Array("kept".utf8)))
    }

    @Test func changingThePassphraseNeedsTheOldOne() async throws {
        let test = try await TestVault()
        #expect(await vaultErrorCode {
            try await test.vault.changePassphrase(from: secure("wrong"), to: secure("new"), cost: .unsafeMinimumForTesting)
        } == .wrongPassphrase)
    }

    @Test func creatingTwiceIsRefused() async throws {
        let test = try await TestVault()
        #expect(await vaultErrorCode {
            try await EncryptedVault.create(storage: test.storage, threadPool: .singleton, keySource: .passphrase(secure("x"), cost: .unsafeMinimumForTesting))
        } == .alreadyInitialized)
    }

    @Test func openingAnEmptyFileSaysItIsNotInitialized() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        #expect(await vaultErrorCode { try await EncryptedVault(storage: storage, threadPool: .singleton) } == .notInitialized)
    }
}

@Suite(.timeLimit(.minutes(20))) struct KeyFileTests {
    @Test func keyFileVaultUnlocksAfterReopen() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try KeyFile.create(at: "\(directory)/key")
        let storage = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        let vault = try await EncryptedVault.create(storage: storage, threadPool: .singleton, keySource: .keyFile(try KeyFile.load(from: "\(directory)/key")))
        try await vault.store(secure("svc token"), service: "ci", account: "bot")
        try storage.close()

        let reopenedStorage = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        defer { try? reopenedStorage.close() }
        let reopened = try await EncryptedVault(storage: reopenedStorage, threadPool: .singleton)
        #expect(await vaultErrorCode { try await reopened.unlock(.keyFile(SecureBytes(randomCount: 32))) } == .wrongPassphrase)
        #expect(await vaultErrorCode { try await reopened.unlock(.passphrase(secure("pw"))) } == .keySourceRejected)
        try await reopened.unlock(.keyFile(try KeyFile.load(from: "\(directory)/key")))
        #expect(try await reopened.retrieve(service: "ci", account: "bot").secret.constantTimeEquals(Array("svc token".utf8)))
    }

    @Test func createdKeyFileIsPrivate() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try KeyFile.create(at: "\(directory)/key")
        let attributes = try FileManager.default.attributesOfItem(atPath: "\(directory)/key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((attributes[.size] as? Int) == 32)
        #expect(await vaultErrorCode { try KeyFile.create(at: "\(directory)/key") } == .keySourceRejected, "an existing key file was overwritten")
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o700])
    func keyFileReadableByOthersIsRefused(mode: Int) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try KeyFile.create(at: "\(directory)/key")
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: "\(directory)/key")
        do {
            _ = try KeyFile.load(from: "\(directory)/key")
            Issue.record("a key file with mode \(String(mode, radix: 8)) was accepted")
        } catch let error as VaultError {
            #expect(error.code == .keySourceRejected)
            #expect(error.reason.contains("chmod 600"))
        }
    }

    @Test func symlinkDirectoryAndWrongSizeAreRefused() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try KeyFile.create(at: "\(directory)/key")
        try FileManager.default.createSymbolicLink(atPath: "\(directory)/link", withDestinationPath: "\(directory)/key")
        #expect(await vaultErrorCode { try KeyFile.load(from: "\(directory)/link") } == .keySourceRejected)
        #expect(await vaultErrorCode { try KeyFile.load(from: directory) } == .keySourceRejected)
        _ = FileManager.default.createFile(atPath: "\(directory)/short", contents: Data([1, 2, 3]), attributes: [.posixPermissions: 0o600])
        #expect(await vaultErrorCode { try KeyFile.load(from: "\(directory)/short") } == .keySourceRejected)
        #expect(await vaultErrorCode { try KeyFile.load(from: "\(directory)/missing") } == .keySourceRejected)
    }
}
