import Foundation
import NIOPosix
import Testing
import VaultCore
import VaultCrypto
import VaultSecretService
import VaultTesting

extension SecretServiceSuite {
    /// The one conformance suite, against items in a real gnome-keyring over a real session bus.
    @Suite struct StoreConformanceTests {
        @Test("Secret Service store conforms", arguments: TokenStoreConformance.cases)
        func secretServiceStoreConforms(_ check: TokenStoreConformance.Case) async throws {
            _ = SharedKeyring.session
            let clock = ManualClock()
            let store = SecretServiceTokenStore(threadPool: .singleton, clock: clock)
            try await removeAllItems(store)
            try await check.run(.init(
                store: store, clock: clock,
                lock: { try await SecretServiceKeyring(threadPool: .singleton).lockDefaultCollection() },
                unlock: { try SharedKeyring.unlockLoginCollection() }))
            try await removeAllItems(store)
        }
    }
}

/// Deletes every sortedvault item in the shared keyring, so each case starts empty.
func removeAllItems(_ store: SecretServiceTokenStore) async throws {
    for item in try await store.list() { try await store.delete(item.key) }
}
