import Foundation
import NIOPosix
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

@Suite(.timeLimit(.minutes(20))) struct LockingTests {
    @Test func whileLockedEveryItemOperationFailsWithLocked() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("present"), service: "s", account: "here")
        await test.vault.lock()
        #expect(await test.vault.isLocked)
        #expect(await vaultErrorCode { try await test.vault.store(secure("x"), service: "s", account: "new") } == .locked)
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "here") } == .locked)
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "absent") } == .locked)
        #expect(await vaultErrorCode { try await test.vault.delete(service: "s", account: "here") } == .locked)
        #expect(await vaultErrorCode { try await test.vault.delete(service: "s", account: "absent") } == .locked)
        #expect(await vaultErrorCode { try await test.vault.list() } == .locked)
        #expect(await vaultErrorCode { try await test.vault.list(service: "s") } == .locked)
        try await test.vault.unlock(.passphrase(secure(TestVault.passphrase)))
        #expect(try await test.vault.retrieve(service: "s", account: "here").secret.constantTimeEquals(Array("present".utf8)))
    }

    @Test func aReopenedVaultStartsLocked() async throws {
        let test = try await TestVault()
        let (storage, vault) = try await test.reopen()
        defer { try? storage.close() }
        #expect(await vault.isLocked)
        #expect(await vaultErrorCode { try await vault.list() } == .locked)
    }
}

@Suite(.timeLimit(.minutes(20))) struct ExpiryTests {
    @Test func expiredItemDisappearsWhenTheInjectedClockPassesItsExpiry() async throws {
        let test = try await TestVault()
        let expiry = test.clock.now.addingTimeInterval(3600)
        try await test.vault.store(secure("hour token"), service: "s", account: "a", options: try StoreOptions(expiresAt: expiry))
        test.clock.advance(by: 3599)
        #expect(try await test.vault.retrieve(service: "s", account: "a").metadata.expiresAt == expiry)
        test.clock.advance(by: 1)
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .notFound)
        #expect(try await test.vault.list().isEmpty)
        let rows = try test.tamper { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") }
        #expect(rows == 0, "the expired item was not purged from the file")
    }

    @Test func purgeRemovesExpiredItemsEvenWhileLocked() async throws {
        let test = try await TestVault()
        for i in 0..<5 {
            try await test.vault.store(secure("t\(i)"), service: "s", account: "a\(i)",
                                       options: try StoreOptions(expiresAt: test.clock.now.addingTimeInterval(Double(10 * (i + 1)))))
        }
        try await test.vault.store(secure("forever"), service: "s", account: "keep")
        await test.vault.lock()
        test.clock.advance(by: 30)
        #expect(try await test.vault.purgeExpired() == 3)
        try await test.vault.unlock(.passphrase(secure(TestVault.passphrase)))
        #expect(try await test.vault.list().map(\.account) == ["a3", "a4", "keep"])
    }

    @Test func storingAnAlreadyExpiredItemMakesItUnreachable() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("stale"), service: "s", account: "a",
                                   options: try StoreOptions(expiresAt: test.clock.now.addingTimeInterval(-1)))
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .notFound)
    }
}

@Suite(.timeLimit(.minutes(20))) struct ValidationTests {
    @Test(arguments: ["", "line\nbreak", "nul\0byte", "tab\there", "esc\u{1B}[31m", String(repeating: "x", count: Limits.maximumNameBytes + 1)])
    func badNamesAreRefused(name: String) async throws {
        let store = InMemoryTokenStore(clock: ManualClock())
        #expect(await vaultErrorCode { try await store.store(secure("x"), service: name, account: "a") } == .invalidArgument)
        #expect(await vaultErrorCode { try await store.store(secure("x"), service: "s", account: name) } == .invalidArgument)
    }

    @Test func namesAtTheLimitAreAccepted() throws {
        let name = String(repeating: "é", count: Limits.maximumNameBytes / 2)
        #expect(throws: Never.self) { try ItemKey(service: name, account: name) }
    }

    @Test func optionsAreBounded() {
        #expect(throws: VaultError.self) { try StoreOptions(label: String(repeating: "l", count: Limits.maximumLabelBytes + 1)) }
        #expect(throws: VaultError.self) {
            try StoreOptions(attributes: Dictionary(uniqueKeysWithValues: (0...Limits.maximumAttributeCount).map { ("k\($0)", "v") }))
        }
        #expect(throws: VaultError.self) { try StoreOptions(attributes: ["": "v"]) }
        #expect(throws: VaultError.self) { try StoreOptions(attributes: ["k": "bad\nvalue"]) }
    }

    @Test func oversizedSecretErrorSaysTheLimit() async throws {
        let test = try await TestVault()
        do {
            try await test.vault.store(SecureBytes(randomCount: Limits.maximumSecretBytes + 1), service: "s", account: "a")
            Issue.record("an oversized secret was stored")
        } catch let error as VaultError {
            #expect(error.code == .invalidArgument)
            #expect(error.reason.contains("512 KiB"))
        }
    }

    @Test func errorsAndItemsNeverShowSecrets() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("hunter2-marker"), service: "s", account: "a")
        let item = try await test.vault.retrieve(service: "s", account: "a")
        #expect(!"\(item)".contains("hunter2"))
        #expect(!String(reflecting: item).contains("hunter2"))
    }
}

@Suite(.timeLimit(.minutes(20))) struct FixtureTests {
    struct Expected: Decodable {
        struct Item: Decodable {
            let service: String
            let account: String
            let label: String?
            let attributes: [String: String]
            let secret: String
        }
        let file: String
        let passphrase: String
        let items: [Item]
    }

    @Test func frozenV1VaultStillOpensWithItsKnownItems() async throws {
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        let expected = try JSONDecoder().decode(Expected.self, from: Data(contentsOf: fixtures.appendingPathComponent("v1-expected.json")))
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = "\(directory)/vault.db"  // never open the committed file itself: SQLite may write to it
        try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent(expected.file).path, toPath: copy)

        let storage = try SQLiteSealedStorage(path: copy)
        defer { try? storage.close() }
        let vault = try await EncryptedVault(storage: storage, threadPool: .singleton, clock: ManualClock())
        try await vault.unlock(.passphrase(secure(expected.passphrase)))
        let listed = try await vault.list()
        #expect(listed.map { "\($0.service)/\($0.account)" }.sorted() == expected.items.map { "\($0.service)/\($0.account)" }.sorted())
        for item in expected.items {
            let got = try await vault.retrieve(service: item.service, account: item.account)
            #expect(got.secret.constantTimeEquals(Array(item.secret.utf8)))
            #expect(got.metadata.label == item.label)
            #expect(got.metadata.attributes == item.attributes)
        }
    }
}
