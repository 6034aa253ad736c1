import Foundation
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

/// Reads racing writes of the same vault are never taken for a rollback: a read takes the state and
/// then the row, and a write may land in between (seen as `IntegrityFailure`s when 50 AutoLogins met
/// one refresh of a login).
@Suite(.timeLimit(.minutes(20))) struct ConcurrentReadTests {
    @Test func readsRacingWritesOfTheSameItemNeverReportARollback() async throws {
        let test = try await TestVault()
        let vault = test.vault
        try await vault.store(secure("v0"), service: "com.example.api", account: "ada")
        try await vault.store(secure("other"), service: "com.example.api", account: "bob")
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask {
                for round in 1...150 { try await vault.store(secure("v\(round)"), service: "com.example.api", account: "ada") }
                return []
            }
            for _ in 0..<4 {
                group.addTask {
                    var failures: [String] = []
                    for _ in 0..<150 {
                        do {
                            _ = try await vault.retrieve(service: "com.example.api", account: "ada")
                            _ = try await vault.list(service: "com.example.api")
                        } catch {
                            failures.append("\(error)")
                        }
                    }
                    return failures
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.count == 0, "reads failed, e.g. \(failures.first ?? "")")
        #expect(try await vault.retrieve(service: "com.example.api", account: "ada").secret.constantTimeEquals(Array("v150".utf8)))
    }
}
