import NIOPosix
import Testing
@testable import Vault
import VaultCrypto

/// Argon2id holds its whole memory cost while it runs, so derivations take turns in the process,
/// whatever the pool they run on can do at once.
@Suite(.timeLimit(.minutes(20))) struct KeyDerivationTests {
    @Test func derivationsHandedOverTogetherRunOneAtATimeOnAPoolWithThreadsToSpare() async throws {
        let threadPool = NIOThreadPool(numberOfThreads: 4)
        threadPool.start()
        let counts = Locked((running: 0, most: 0, finished: 0))
        let master = SecureBytes(randomCount: MasterKey.count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    _ = try await KeyDerivation.run(on: threadPool) {
                        counts.withLock { $0.running += 1; $0.most = max($0.most, $0.running) }
                        defer { counts.withLock { $0.running -= 1; $0.finished += 1 } }
                        return try KeySlots.make(for: .passphrase(secure("pw \(index)"), cost: .unsafeMinimumForTesting), wrapping: master)
                    }
                }
            }
            try await group.waitForAll()
        }
        try await threadPool.shutdownGracefully()
        let seen = counts.withLock { $0 }
        #expect(seen.finished == 8)
        #expect(seen.most == 1, "derivations ran side by side: \(seen.most) at once")
    }
}
