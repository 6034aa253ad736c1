import Foundation
import GRDB
import NIOPosix
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite

/// The `secret-service` key slot: a key the caller keeps in the desktop keyring, next to a recovery
/// passphrase. No keyring here — the slot only wraps the master key under the bytes it is given.
@Suite(.timeLimit(.minutes(20))) struct KeyringSlotTests {
    static let keyID = "00112233445566778899aabbccddeeff"

    @Test func eitherTheKeyringKeyOrTheRecoveryPassphraseUnlocks() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keyringKey = SecureBytes(randomCount: 32)
        let storage = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        let vault = try await EncryptedVault.create(storage: storage, threadPool: .singleton, keySources: [
            .secretService(keyringKey, keyID: Self.keyID), .passphrase(secure("recovery"), cost: .unsafeMinimumForTesting),
        ])
        try await vault.store(secure("token"), service: "s", account: "a")
        #expect(try await vault.keySourceKinds() == ["secret-service", "passphrase"])
        #expect(try await vault.secretServiceKeyID() == Self.keyID)
        try storage.close()

        let reopened = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        defer { try? reopened.close() }
        let again = try await EncryptedVault(storage: reopened, threadPool: .singleton)
        #expect(await vaultErrorCode { try await again.unlock(.secretService(SecureBytes(randomCount: 32))) } == .wrongPassphrase)
        try await again.unlock(.secretService(keyringKey))
        #expect(try await again.retrieve(service: "s", account: "a").secret.constantTimeEquals(Array("token".utf8)))
        await again.lock()
        try await again.unlock(.passphrase(secure("recovery")))
        #expect(try await again.retrieve(service: "s", account: "a").secret.constantTimeEquals(Array("token".utf8)))
        // Changing the recovery passphrase keeps the keyring slot.
        try await again.changePassphrase(from: secure("recovery"), to: secure("new"), cost: .unsafeMinimumForTesting)
        await again.lock()
        try await again.unlock(.secretService(keyringKey))
    }

    @Test func aSlotWithoutAValidKeyIDIsRefused() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        #expect(await vaultErrorCode {
            try await EncryptedVault.create(storage: storage, threadPool: .singleton, keySource: .secretService(SecureBytes(randomCount: 32), keyID: "not hex"))
        } == .invalidArgument)
        _ = try await EncryptedVault.create(storage: storage, threadPool: .singleton, keySource: .secretService(SecureBytes(randomCount: 32), keyID: Self.keyID))
        try storage.close()
        let queue = try DatabaseQueue(path: "\(directory)/vault.db")
        try await queue.write { db in
            let header = String(data: try Data.fetchOne(db, sql: "SELECT body FROM vault_header")!, encoding: .utf8)!
                .replacingOccurrences(of: Self.keyID, with: "../../etc")
            try db.execute(sql: "UPDATE vault_header SET body = ?", arguments: [Data(header.utf8)])
        }
        try queue.close()
        let reopened = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        defer { try? reopened.close() }
        #expect(await vaultErrorCode { try await EncryptedVault(storage: reopened, threadPool: .singleton) } == .unsupportedFormat)
    }
}
