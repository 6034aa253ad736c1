import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import Vault

/// A backup's read (`snapshot()`): every record, secrets and sortedvault's own included, as of one
/// moment, while writes go on.
@Suite(.timeLimit(.minutes(20))) struct SnapshotTests {
    @Test func aSnapshotHoldsEveryRecordWithItsSecretAndTheReservedOnes() async throws {
        let test = try await TestVault()
        try await test.vault.store(SecureBytes(copying: Array("one".utf8)), service: "b.example", account: "ada")
        try await test.vault.store(SecureBytes(copying: Array("two".utf8)), service: "a.example", account: "bob",
                                   options: try StoreOptions(label: "L", attributes: ["k": "v"]))
        try await test.vault.store(SecureBytes(copying: Array("login".utf8)), service: ItemKey.reservedServicePrefix + "session/app", account: "ada")
        let snapshot = try await test.vault.snapshot()
        #expect(snapshot.map(\.metadata.service) == ["a.example", "b.example", ItemKey.reservedServicePrefix + "session/app"])
        #expect(snapshot[0].secret == SecureBytes(copying: Array("two".utf8)) && snapshot[0].metadata.attributes == ["k": "v"])
        #expect(snapshot[2].secret == SecureBytes(copying: Array("login".utf8)))
    }

    /// The writer stores A's version, then B's, over and over: at any one moment B is A's version
    /// or one behind. Reads of A and B one after the other would see B ahead of A; every snapshot
    /// taken meanwhile holds the rule.
    @Test func aSnapshotTakenWhileWritesGoOnIsOneMoment() async throws {
        let test = try await TestVault()
        let vault = test.vault
        func version(_ items: [RetrievedItem], _ service: String) -> Int {
            items.first { $0.metadata.service == service }.map { Int(String(decoding: $0.secret.withUnsafeBytes { Array($0) }, as: UTF8.self))! } ?? 0
        }
        let writer = Task {
            for value in 1...150 {
                try await vault.store(SecureBytes(copying: Array("\(value)".utf8)), service: "a.example", account: "x")
                try await vault.store(SecureBytes(copying: Array("\(value)".utf8)), service: "b.example", account: "x")
            }
        }
        var snapshots = 0
        while true {
            let items = try await vault.snapshot()
            let a = version(items, "a.example"), b = version(items, "b.example")
            #expect(b == a || b == a - 1, "a snapshot held A at \(a) and B at \(b)")
            snapshots += 1
            if b == 150 { break }
        }
        try await writer.value
        #expect(snapshots > 1)
    }

    @Test func aLockedVaultTakesNoSnapshot() async throws {
        let test = try await TestVault()
        await test.vault.lock()
        await #expect(throws: VaultError.self) { try await test.vault.snapshot() }
    }
}
