import Foundation
import GRDB
import NIOPosix
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

/// A real encrypted vault in a real SQLite file in a fresh temporary directory, at the test KDF cost.
final class TestVault: @unchecked Sendable {
    static let passphrase = "test passphrase ✓"

    let directory: String
    let clock: ManualClock
    let storage: SQLiteSealedStorage
    let vault: EncryptedVault

    var databasePath: String { storage.path }

    /// The external generation record, in its own directory (as `$XDG_STATE_HOME` is apart from the data).
    let record: GenerationFile

    init(clock: ManualClock = ManualClock()) async throws {
        directory = try makeTemporaryDirectory()
        self.clock = clock
        record = GenerationFile(path: "\(directory)/state/generation")
        storage = try SQLiteSealedStorage(path: "\(directory)/vault.db")
        vault = try await EncryptedVault.create(
            storage: storage, threadPool: .singleton,
            keySource: .passphrase(SecureBytes(copying: Array(Self.passphrase.utf8)), cost: .unsafeMinimumForTesting),
            clock: clock, generationRecord: record)
    }

    deinit {
        try? storage.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Opens the same file a second time, locked, as a restarted daemon would.
    func reopen() async throws -> (SQLiteSealedStorage, EncryptedVault) {
        let storage = try SQLiteSealedStorage(path: databasePath)
        return (storage, try await EncryptedVault(storage: storage, threadPool: .singleton, clock: clock, generationRecord: record))
    }

    /// Runs raw SQL against the file from a separate connection, as an attacker with file access could.
    func tamper<T>(_ body: (Database) throws -> T) throws -> T {
        let queue = try DatabaseQueue(path: databasePath)
        defer { try? queue.close() }
        return try queue.writeWithoutTransaction(body)
    }

    /// All bytes of the database and its `-wal` and `-shm` files.
    func rawFiles() -> [(name: String, bytes: Data)] {
        ["", "-wal", "-shm"].compactMap { suffix in
            FileManager.default.contents(atPath: databasePath + suffix).map { ("vault.db" + suffix, $0) }
        }
    }
}

func makeTemporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("sortedvault-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    return path
}

func secure(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

/// The code of a thrown `VaultError`, or nil when `body` succeeded or threw something else.
func vaultErrorCode<T>(_ body: () async throws -> T) async -> VaultError.Code? {
    do {
        _ = try await body()
        return nil
    } catch let error as VaultError {
        return error.code
    } catch {
        return nil
    }
}
