import Foundation
import Logging
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
    static func itemStore(for settings: DaemonSettings, vault: EncryptedVault, clock: any VaultClock) -> any TokenStore {
        switch settings.backend {
        case .embedded: return vault
        case .secretService: return VaultGatedStore(vault: vault, items: SecretServiceTokenStore(clock: clock))
        }
    }

    /// When the vault's key is kept in the desktop keyring, fetches it and unlocks the vault, in the
    /// background: the daemon serves (locked) meanwhile, however slow the keyring. When the keyring is
    /// unavailable or locked the vault stays locked, and the log says why and how to recover — there
    /// is no fallback to anything weaker.
    ///
    /// Start-up waits for it up to `startupWait`, so a client that started the daemon on demand finds
    /// the vault already unlocked; a keyring slower than that only delays the unlock, never the socket.
    static func unlockFromKeyring(_ vault: EncryptedVault, logger: Logger, startupWait: Duration = .seconds(2)) async -> Task<Void, Never>? {
        guard let keyID = try? await vault.secretServiceKeyID() else { return nil }
        let unlock = Task {
            do {
                let key = try await SecretServiceKeySource().fetchKey(id: keyID)
                guard !Task.isCancelled else { return }
                try await vault.unlock(.secretService(key))
                logger.info("vault unlocked with its key from the desktop keyring (Secret Service)")
            } catch let error as VaultError {
                logger.warning("the vault stays locked: its key is kept in the desktop keyring, but \(error.reason). To recover: unlock or start the keyring, then restart the daemon; or run `sortedvault unlock` with the recovery passphrase chosen at init",
                               metadata: ["code": "\(error.code)"])
            } catch {
                logger.warning("the vault stays locked: fetching its key from the desktop keyring failed (\(error)); run `sortedvault unlock` with the recovery passphrase")
            }
        }
        // Whichever comes first; the unlock itself is never cancelled by the wait.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let first = ResumeOnce(continuation)
            Task { await unlock.value; first.resume() }
            Task { try? await Task.sleep(for: startupWait); first.resume() }
        }
        return unlock
    }

    /// Logs up front when the item backend's keyring cannot be used; item calls fail clearly anyway.
    static func checkItemKeyring(_ settings: DaemonSettings, logger: Logger) {
        guard settings.backend == .secretService else { return }
        Task {
            switch await SecretServiceKeyring().availability() {
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

/// Resumes a continuation on the first call only.
private final class ResumeOnce: @unchecked Sendable {
    private var continuation: CheckedContinuation<Void, Never>?
    private let lock = NSLock()

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

    func resume() {
        let pending = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            defer { continuation = nil }
            return continuation
        }
        pending?.resume()
    }
}
