import Foundation
import GRDB
import Testing
import Vault
import VaultCore
import VaultCrypto

/// Tampering with stored records: every change makes exactly the touched item fail to open.
@Suite(.timeLimit(.minutes(20))) struct IntegrityTests {
    @Test func flippingAnyByteOfAStoredRecordFailsThatItemOnly() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("k"), service: "target", account: "a")
        try await test.vault.store(secure("other secret"), service: "bystander", account: "b")
        let target = try test.tamper { db in
            try Row.fetchOne(db, sql: "SELECT id, metadata, secret FROM items ORDER BY id LIMIT 1")!
        }
        let id: Int64 = target["id"]
        for column in ["secret", "metadata"] {
            let original = Array(target[column] as Data)
            // Every byte: the format byte, the 24-byte nonce, the 16-byte tag and the body.
            for index in original.indices {
                var damaged = original
                damaged[index] ^= 0x80
                try test.tamper { db in
                    try db.execute(sql: "UPDATE items SET \(column) = ? WHERE id = ?", arguments: [Data(damaged), id])
                }
                #expect(await vaultErrorCode { try await test.vault.retrieve(service: "target", account: "a") } == .integrityFailure,
                        "flipping byte \(index) of \(column) was not detected")
                let bystander = try await test.vault.retrieve(service: "bystander", account: "b")
                #expect(bystander.secret.constantTimeEquals(Array("other secret".utf8)))
            }
            try test.tamper { db in
                try db.execute(sql: "UPDATE items SET \(column) = ? WHERE id = ?", arguments: [Data(original), id])
            }
        }
        #expect(try await test.vault.retrieve(service: "target", account: "a").secret.constantTimeEquals(Array("k".utf8)))
    }

    @Test func truncatedOrEmptyRecordsFailWithIntegrityError() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("abc"), service: "s", account: "a")
        for replacement in [Data(), Data([1]), Data(repeating: 1, count: 40)] {
            try test.tamper { db in try db.execute(sql: "UPDATE items SET secret = ?", arguments: [replacement]) }
            #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .integrityFailure)
        }
    }

    @Test func swappingTheCiphertextsOfTwoRowsFailsToOpen() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("alpha"), service: "s", account: "a")
        try await test.vault.store(secure("bravo"), service: "s", account: "b")
        try test.tamper { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, metadata, secret FROM items ORDER BY id")
            for (row, other) in [(rows[0], rows[1]), (rows[1], rows[0])] {
                try db.execute(sql: "UPDATE items SET metadata = ?, secret = ? WHERE id = ?",
                               arguments: [other["metadata"] as Data, other["secret"] as Data, row["id"] as Int64])
            }
        }
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .integrityFailure)
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "b") } == .integrityFailure)
    }

    @Test func swappingOnlyTheSecretsOfTwoRowsFailsToOpen() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("alpha"), service: "s", account: "a")
        try await test.vault.store(secure("bravo"), service: "s", account: "b")
        try test.tamper { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, secret FROM items ORDER BY id")
            try db.execute(sql: "UPDATE items SET secret = ? WHERE id = ?", arguments: [rows[1]["secret"] as Data, rows[0]["id"] as Int64])
            try db.execute(sql: "UPDATE items SET secret = ? WHERE id = ?", arguments: [rows[0]["secret"] as Data, rows[1]["id"] as Int64])
        }
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .integrityFailure)
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "b") } == .integrityFailure)
    }

    @Test func puttingBackAnOlderCiphertextOfTheSameRowFailsToOpen() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("old token"), service: "s", account: "a")
        let old = try test.tamper { db in try Row.fetchOne(db, sql: "SELECT metadata, secret FROM items")! }
        try await test.vault.store(secure("new token"), service: "s", account: "a")
        try test.tamper { db in
            try db.execute(sql: "UPDATE items SET metadata = ?, secret = ?", arguments: [old["metadata"] as Data, old["secret"] as Data])
        }
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .integrityFailure)
    }

    @Test func extendingTheClearExpiryIsDetected() async throws {
        let test = try await TestVault()
        let options = try StoreOptions(expiresAt: test.clock.now.addingTimeInterval(60))
        try await test.vault.store(secure("short-lived"), service: "s", account: "a", options: options)
        try test.tamper { db in try db.execute(sql: "UPDATE items SET expires_at = expires_at + 86400") }
        #expect(await vaultErrorCode { try await test.vault.retrieve(service: "s", account: "a") } == .integrityFailure)
    }

    @Test func listReportsDamagedItemsInsteadOfHidingThem() async throws {
        let test = try await TestVault()
        try await test.vault.store(secure("a"), service: "s", account: "a")
        try await test.vault.store(secure("b"), service: "s", account: "b")
        try test.tamper { db in
            // Byte 31 flipped, never just set: a sealed record's bytes are random, and one in 256 is already 0.
            try db.execute(sql: """
                UPDATE items SET metadata = substr(metadata, 1, 30)
                    || CASE substr(metadata, 31, 1) WHEN x'00' THEN x'01' ELSE x'00' END || substr(metadata, 32)
                WHERE id = (SELECT min(id) FROM items)
                """)
        }
        #expect(await vaultErrorCode { try await test.vault.list() } == .integrityFailure)
        // The damaged item can still be deleted by name, after which list works again.
        try await test.vault.delete(service: "s", account: "a")
        #expect(try await test.vault.list().map(\.account) == ["b"])
    }
}
