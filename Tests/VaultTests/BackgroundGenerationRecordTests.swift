import Dispatch
import Foundation
import NIOPosix
import Synchronization
import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

/// The daemon's generation record is written after the store is acknowledged, off the caller's
/// thread, and coalesced; it still catches an older copy of the file once written.
@Suite(.timeLimit(.minutes(20))) struct BackgroundGenerationRecordTests {
    /// A real `GenerationFile` whose writes wait at a gate the test opens, as a slow disk would.
    final class GatedRecord: GenerationRecord {
        let file: GenerationFile
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let written = Locked<[UInt64]>([])
        let gated = Locked(true)

        init(path: String) {
            file = GenerationFile(path: path)
        }

        func read() throws -> (vaultID: [UInt8], generation: UInt64)? {
            try file.read()
        }

        func write(vaultID: [UInt8], generation: UInt64) throws {
            if gated.withLock({ $0 }) {
                entered.signal()
                gate.wait()
            }
            try file.write(vaultID: vaultID, generation: generation)
            written.withLock { $0.append(generation) }
        }

        func open() {
            gated.withLock { $0 = false }
            gate.signal()
        }
    }

    @Test func storesAreAcknowledgedWhileTheRecordWriteWaitsAndABurstCostsOneMoreWrite() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gated = GatedRecord(path: directory + "/state/generation")
        let record = BackgroundGenerationRecord(gated, threadPool: .singleton)
        let storage = try SQLiteSealedStorage(path: directory + "/vault.db")
        defer { try? storage.close() }
        let vault = try await EncryptedVault.create(
            storage: storage, threadPool: .singleton, keySource: .passphrase(secure("pw"), cost: .unsafeMinimumForTesting),
            clock: ManualClock(), generationRecord: record)
        // With the synchronous record these stores would wait at the gate forever.
        try await vault.store(secure("secret 0"), service: "s", account: "a0")
        // A generation was handed over (by the creation or that store); its write is now held at the gate.
        #expect(gated.entered.wait(timeout: .now() + 30) == .success, "no record write started")
        for index in 1..<10 {
            try await vault.store(secure("secret \(index)"), service: "s", account: "a\(index)")
        }
        #expect(gated.written.withLock { $0 }.isEmpty, "a record write finished while the gate was closed")

        gated.open()
        await record.flush()
        let writes = gated.written.withLock { $0 }
        // The held write, then the newest generation only: the ten stores' writes were coalesced.
        #expect(writes.count == 2, "record writes: \(writes)")
        let newest = try #require(try record.read())
        #expect(newest.generation == writes.last)
        #expect(newest.generation > writes[0])
    }

    @Test func anOlderCopyOfTheFileIsRefusedOnceTheRecordIsFlushed() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = BackgroundGenerationRecord(GenerationFile(path: directory + "/state/generation"), threadPool: .singleton)
        let path = directory + "/vault.db"
        do {
            let storage = try SQLiteSealedStorage(path: path)
            let vault = try await EncryptedVault.create(
                storage: storage, threadPool: .singleton, keySource: .passphrase(secure("pw"), cost: .unsafeMinimumForTesting),
                clock: ManualClock(), generationRecord: record)
            try await vault.store(secure("kept"), service: "s", account: "a")
            try storage.close()
        }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: directory + "/older.db" + suffix)
        }
        do {
            let storage = try SQLiteSealedStorage(path: path)
            let vault = try await EncryptedVault(storage: storage, threadPool: .singleton, clock: ManualClock(), generationRecord: record)
            try await vault.unlock(.passphrase(secure("pw")))
            try await vault.delete(service: "s", account: "a")
            try storage.close()
        }
        await record.flush()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: directory + "/older.db" + suffix) {
            try FileManager.default.copyItem(atPath: directory + "/older.db" + suffix, toPath: path + suffix)
        }
        let storage = try SQLiteSealedStorage(path: path)
        defer { try? storage.close() }
        #expect(await vaultErrorCode { try await EncryptedVault(storage: storage, threadPool: .singleton, clock: ManualClock(), generationRecord: record) } == .integrityFailure)
    }
}
