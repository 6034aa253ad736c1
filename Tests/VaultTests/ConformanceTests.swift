import Testing
import Vault
import VaultCore
import VaultCrypto
import VaultSQLite
import VaultTesting

/// The one conformance suite, run against every backend in this package.
@Suite(.timeLimit(.minutes(20))) struct ConformanceTests {
    @Test("in-memory store conforms", arguments: TokenStoreConformance.cases)
    func inMemoryStoreConforms(_ check: TokenStoreConformance.Case) async throws {
        let clock = ManualClock()
        let store = InMemoryTokenStore(clock: clock)
        try await check.run(.init(store: store, clock: clock, lock: { await store.lock() }, unlock: { await store.unlock() }))
    }

    @Test("encrypted SQLite vault conforms", arguments: TokenStoreConformance.cases)
    func sqliteVaultConforms(_ check: TokenStoreConformance.Case) async throws {
        let test = try await TestVault()
        let vault = test.vault
        try await check.run(.init(
            store: vault, clock: test.clock,
            lock: { await vault.lock() },
            unlock: { try await vault.unlock(.passphrase(secure(TestVault.passphrase))) }))
        withExtendedLifetime(test) {}
    }

    @Test("encrypted SQLite vault conforms after a reopen", arguments: TokenStoreConformance.cases)
    func reopenedSQLiteVaultConforms(_ check: TokenStoreConformance.Case) async throws {
        let test = try await TestVault()
        let (storage, vault) = try await test.reopen()
        try await vault.unlock(.passphrase(secure(TestVault.passphrase)))
        try await check.run(.init(
            store: vault, clock: test.clock,
            lock: { await vault.lock() },
            unlock: { try await vault.unlock(.passphrase(secure(TestVault.passphrase))) }))
        try storage.close()
        withExtendedLifetime(test) {}
    }
}
