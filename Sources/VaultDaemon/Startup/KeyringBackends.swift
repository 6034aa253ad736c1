import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOPosix
import Vault
import VaultCore
import VaultCrypto
import VaultPolicy
import VaultSecretService

/// The daemon's two optional uses of the desktop keyring (Secret Service): the vault key kept there,
/// and items kept there.
enum KeyringBackends {
    /// The store item calls go to. With `backend = "secret-service"` items live in the keyring, but
    /// the daemon's own lock still gates them: `sortedvault lock` stops them being served.
    static func itemStore(for settings: DaemonSettings, vault: EncryptedVault, clock: any VaultClock,
                          threadPool: NIOThreadPool) -> any TokenStore {
        switch settings.backend {
        // A fleet daemon (postgresql) has no local vault and never asks: its items are the fleet's database.
        case .embedded, .postgresql: return vault
        case .secretService: return VaultGatedStore(vault: vault, items: SecretServiceTokenStore(threadPool: threadPool, clock: clock))
        }
    }

    /// Logs up front when the item backend's keyring cannot be used; item calls fail clearly anyway.
    static func checkItemKeyring(_ settings: DaemonSettings, threadPool: NIOThreadPool, logger: Logger) {
        guard settings.backend == .secretService else { return }
        Task {
            switch await SecretServiceKeyring(threadPool: threadPool).availability() {
            case .available:
                logger.info("items are kept in the desktop keyring (Secret Service)")
            case .locked(let error), .unavailable(let error):
                logger.warning("items are kept in the desktop keyring (backend = \"secret-service\"), but: \(error.reason)")
            }
        }
    }
}

/// A store served only while the daemon's vault is unlocked.
struct VaultGatedStore: TokenStore {
    let vault: EncryptedVault
    let items: any TokenStore

    private func requireUnlocked() async throws {
        if await vault.isLocked { throw VaultError.locked }
    }

    func store(_ secret: SecureBytes, for key: ItemKey, options: StoreOptions) async throws {
        try await requireUnlocked()
        try await items.store(secret, for: key, options: options)
    }

    func retrieve(_ key: ItemKey) async throws -> RetrievedItem {
        try await requireUnlocked()
        return try await items.retrieve(key)
    }

    func delete(_ key: ItemKey) async throws {
        try await requireUnlocked()
        try await items.delete(key)
    }

    func list(service: String?) async throws -> [ItemMetadata] {
        try await requireUnlocked()
        return try await items.list(service: service)
    }
}
