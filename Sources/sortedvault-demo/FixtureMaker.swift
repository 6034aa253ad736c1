import Foundation
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite

/// Writes the frozen v1 fixture: a passphrase vault at the test cost holding the items listed in
/// `v1-expected.json`. Run once per format version; the committed files must then never change.
enum FixtureMaker {
    static let passphrase = "correct horse battery staple"

    static let items: [(service: String, account: String, label: String?, secret: String)] = [
        ("com.sorted.api", "ada@example.com", "Sorted API (ada)", "access-token-0123456789abcdef"),
        ("com.sorted.api", "grace@example.com", nil, "refresh-token-fedcba9876543210"),
        ("café ☕️", "José", "unicode", ""),
    ]

    static func make(in dir: String) async throws {
        let path = "\(dir)/v1-passphrase.sqlite"
        guard !FileManager.default.fileExists(atPath: path) else {
            throw VaultError(.alreadyInitialized, "\(path) exists; the fixture is frozen and must not be regenerated")
        }
        let storage = try SQLiteSealedStorage(path: path)
        let vault = try await EncryptedVault.create(
            storage: storage, keySource: .passphrase(SecureBytes(copying: Array(passphrase.utf8)), cost: .unsafeMinimumForTesting))
        for item in items {
            try await vault.store(SecureBytes(copying: Array(item.secret.utf8)), service: item.service, account: item.account,
                                  options: try StoreOptions(label: item.label, attributes: ["fixture": "v1"]))
        }
        try storage.close()
        print("wrote \(path)")
    }
}
