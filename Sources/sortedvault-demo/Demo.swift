import Foundation
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite

/// `sortedvault-demo`: the embedded default end to end, in one process: a key-file vault in a temporary
/// directory, a store/retrieve/list/delete round trip of a random secret, and a raw scan of the data
/// files showing neither the secret nor its names on disk.
///
/// `sortedvault-demo make-v1-fixture DIR` writes the frozen v1 test fixture (see Tests/VaultTests/Fixtures).
@main
struct Demo {
    static func main() async {
        do {
            let arguments = CommandLine.arguments.dropFirst()
            if arguments.first == "make-v1-fixture", let dir = arguments.dropFirst().first {
                try await FixtureMaker.make(in: dir)
            } else if arguments.isEmpty {
                try await roundTrip()
            } else {
                FileHandle.standardError.write(Data("usage: sortedvault-demo [make-v1-fixture DIR]\n".utf8))
                exit(64)
            }
        } catch {
            FileHandle.standardError.write(Data("sortedvault-demo: \(error)\n".utf8))
            exit(1)
        }
    }

    static func roundTrip() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sortedvault-demo-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: dir) }

        try KeyFile.create(at: "\(dir)/key")
        let storage = try SQLiteSealedStorage(path: "\(dir)/vault.db")
        let vault = try await EncryptedVault.create(storage: storage, keySource: .keyFile(try KeyFile.load(from: "\(dir)/key")))
        print("created an encrypted vault in \(dir) (key file, SQLite)")

        let marker = "demo-secret-" + SecureRandom.bytes(count: 16).map { String(format: "%02x", $0) }.joined()
        let service = "com.sorted.demo-" + SecureRandom.bytes(count: 4).map { String(format: "%02x", $0) }.joined()
        try await vault.store(SecureBytes(copying: Array(marker.utf8)), service: service, account: "ada")
        let item = try await vault.retrieve(service: service, account: "ada")
        print("store → retrieve: \(item.secret.constantTimeEquals(Array(marker.utf8)) ? "same bytes" : "MISMATCH")")
        print("list: \(try await vault.list().map { "\($0.service)/\($0.account)" })")
        print("secret or names in the data files while stored: \(scan(dir, for: [marker, service]) ? "FOUND" : "none")")
        try await vault.delete(service: service, account: "ada")
        print("delete → list: \(try await vault.list().count) items")
        print("secret or names in the data files after delete: \(scan(dir, for: [marker, service]) ? "FOUND" : "none")")
        try storage.close()
    }

    /// Whether any data file in `dir` contains any of `needles` as raw bytes.
    static func scan(_ dir: String, for needles: [String]) -> Bool {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        for file in files where file.hasPrefix("vault.db") {
            guard let data = FileManager.default.contents(atPath: "\(dir)/\(file)") else { continue }
            for needle in needles where data.range(of: Data(needle.utf8)) != nil { return true }
        }
        return false
    }
}
