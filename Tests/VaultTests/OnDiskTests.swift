import Foundation
import GRDB
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite

/// What an attacker with a copy of the data files sees: nothing but ciphertext, and after a delete,
/// not even that.
@Suite(.timeLimit(.minutes(20))) struct OnDiskTests {
    struct Marker {
        let service: String
        let account: String
        let secret: [UInt8]
    }

    @Test func rawScanFindsNoSecretsOrNamesWhileStoredOrAfterDelete() async throws {
        let test = try await TestVault()
        let markers = (0..<100).map { i in
            Marker(service: "svc-\(i)-\(hex(SecureRandom.bytes(count: 8)))",
                   account: "acct-\(i)-\(hex(SecureRandom.bytes(count: 8)))",
                   secret: Array("secret-\(i)-\(hex(SecureRandom.bytes(count: 12)))".utf8))
        }
        for marker in markers {
            try await test.vault.store(SecureBytes(copying: marker.secret), service: marker.service, account: marker.account,
                                       options: try StoreOptions(label: "label-\(marker.service)", attributes: ["attr": marker.account]))
        }
        let needles = markers.flatMap { [$0.secret, Array($0.service.utf8), Array($0.account.utf8)] }
        var forms = needles.flatMap(encodings)
        #expect(findings(in: test, of: forms).isEmpty)

        // Collect every stored ciphertext, then delete everything and scan for those too.
        let ciphertexts = try test.tamper { db in
            try Row.fetchAll(db, sql: "SELECT metadata, secret FROM items").flatMap { row in
                [Array(row["metadata"] as Data), Array(row["secret"] as Data)]
            }
        }
        #expect(ciphertexts.count == 200)
        for marker in markers {
            try await test.vault.delete(service: marker.service, account: marker.account)
        }
        forms += ciphertexts.map { Array($0.suffix(32)) }  // a 32-byte run of each ciphertext (nonce, tag or body)
        forms += ciphertexts.map { Array($0.prefix(32)) }
        let found = findings(in: test, of: forms)
        #expect(found.isEmpty, "found \(found.count) traces after delete, for example in \(found.first ?? "")")
    }

    @Test func replacingAnItemLeavesNoOldCiphertext() async throws {
        let test = try await TestVault()
        let old = Array("old-secret-\(hex(SecureRandom.bytes(count: 16)))".utf8)
        try await test.vault.store(SecureBytes(copying: old), service: "s", account: "a")
        let oldCiphertext = try test.tamper { db in Array(try Data.fetchOne(db, sql: "SELECT secret FROM items")!) }
        try await test.vault.store(secure("new"), service: "s", account: "a")
        #expect(findings(in: test, of: [Array(oldCiphertext.suffix(32)), Array(oldCiphertext.prefix(32))]).isEmpty)
    }

    @Test func largeSecretsLeaveNoTraceAfterDelete() async throws {
        let test = try await TestVault()
        try await test.vault.store(SecureBytes(randomCount: 256 * 1024), service: "big", account: "a")
        let ciphertext = try test.tamper { db in Array(try Data.fetchOne(db, sql: "SELECT secret FROM items")!) }
        try await test.vault.delete(service: "big", account: "a")
        let samples = stride(from: 0, to: ciphertext.count - 32, by: 8192).map { Array(ciphertext[$0..<$0 + 32]) }
        #expect(findings(in: test, of: samples).isEmpty)
    }

    @Test func databaseFileIsPrivateAndPassesIntegrityCheck() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("x"), service: "s", account: "a")
        let attributes = try FileManager.default.attributesOfItem(atPath: test.databasePath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let result = try test.tamper { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        #expect(result == ["ok"])
    }

    @Test func storesAreDurableAndDeletesScrubbed() async throws {
        let test = try await TestVault()
        let settings = try await test.storage.settings()
        #expect(settings.journalMode == "wal")
        #expect(settings.synchronous == 2, "synchronous is not FULL")
        #expect(settings.secureDelete)
    }

    @Test func damagedDatabaseIsRefusedOnOpenWithAClearError() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = FileManager.default.createFile(atPath: "\(directory)/vault.db", contents: Data(repeating: 0x42, count: 8192))
        do {
            _ = try SQLiteSealedStorage(path: "\(directory)/vault.db")
            Issue.record("a garbage file opened as a vault")
        } catch let error as VaultError {
            #expect(error.code == .storageFailure)
            #expect(error.reason.contains("damaged"))
        }
    }

    // MARK: Helpers

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The raw, hex and base64 forms of `bytes`.
    private func encodings(_ bytes: [UInt8]) -> [[UInt8]] {
        [bytes, Array(hex(bytes).utf8), Array(hex(bytes).uppercased().utf8), Array(Data(bytes).base64EncodedString().utf8)]
    }

    private func findings(in test: TestVault, of needles: [[UInt8]]) -> [String] {
        var found: [String] = []
        for (name, bytes) in test.rawFiles() {
            for needle in needles where bytes.range(of: Data(needle)) != nil {
                found.append(name)
            }
        }
        return found
    }
}
