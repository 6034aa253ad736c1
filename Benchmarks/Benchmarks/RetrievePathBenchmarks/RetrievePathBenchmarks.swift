import Benchmark
import Foundation
import NIOPosix
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite

/// The daemon's retrieve path without the socket: `EncryptedVault.retrieve` over `SQLiteSealedStorage`
/// on a real file (WAL, as the daemon opens it), reading an item that exists. This is the actor hop,
/// the lookup-key hash, the SQLite read, and the secretbox open of record and secret; and the fast path
/// the daemon answers on its event loop (`retrieveNow`: no actor hop, one prepared statement on the
/// read connection).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .instructions, .mallocCountTotal, .throughput],
        timeUnits: .microseconds,
        maxDuration: .seconds(3)
    )
    Benchmark(
        "retrieve existing item (1 KiB secret)",
        closure: { benchmark async in
            let fixture = RetrieveFixture.current!
            for _ in benchmark.scaledIterations {
                blackHole(try! await fixture.vault.retrieve(fixture.key))
            }
        },
        setup: { RetrieveFixture.current = try await RetrieveFixture.make() },
        teardown: { RetrieveFixture.current?.remove(); RetrieveFixture.current = nil }
    )
    Benchmark(
        "retrieveNow existing item (1 KiB secret), synchronous fast path",
        closure: { benchmark in
            let fixture = RetrieveFixture.current!
            for _ in benchmark.scaledIterations {
                blackHole(try! fixture.vault.retrieveNow(fixture.key)!)
            }
        },
        setup: { RetrieveFixture.current = try await RetrieveFixture.make() },
        teardown: { RetrieveFixture.current?.remove(); RetrieveFixture.current = nil }
    )
}

/// A key-file vault in a fresh temp directory holding one 1 KiB item.
final class RetrieveFixture: Sendable {
    nonisolated(unsafe) static var current: RetrieveFixture?

    let directory: URL
    let vault: EncryptedVault
    let key: ItemKey

    private init(directory: URL, vault: EncryptedVault, key: ItemKey) {
        self.directory = directory
        self.vault = vault
        self.key = key
    }

    static func make() async throws -> RetrieveFixture {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sortedvault-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let storage = try SQLiteSealedStorage(path: directory.appendingPathComponent("vault.sqlite").path)
        let vault = try await EncryptedVault.create(
            storage: storage, threadPool: .singleton, keySource: .keyFile(SecureBytes(randomCount: KeyFile.keyCount)))
        let key = try ItemKey(service: "github.com", account: "ada@example.com")
        try await vault.store(SecureBytes(randomCount: 1024), for: key, options: StoreOptions(label: "bench"))
        return RetrieveFixture(directory: directory, vault: vault, key: key)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
