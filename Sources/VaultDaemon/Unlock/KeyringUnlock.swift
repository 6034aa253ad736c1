import Logging
import NIOPosix
import ServiceLifecycle
import Vault
import VaultCore
import VaultSecretService

/// When the vault's key is kept in the desktop keyring (Secret Service), fetches it and unlocks the
/// vault, in the background: the daemon serves (locked) meanwhile, however slow the keyring. When
/// the keyring is unavailable or locked the vault stays locked, and the log says why and how to
/// recover — there is no fallback to anything weaker.
///
/// The socket server waits for ``settled`` up to a couple of seconds before it accepts, so a client
/// that started the daemon on demand finds the vault already unlocked; a slower keyring only delays
/// the unlock, never the socket. A graceful shutdown abandons a keyring call still hanging (a
/// libsecret call cannot be cancelled; its late answer is dropped).
final class KeyringUnlock: Service, Sendable {
    private let vault: EncryptedVault
    private let keys: SecretServiceKeySource
    private let keyID: String
    private let logger: Logger
    private let onUnlock: @Sendable () -> Void
    /// Yields once the attempt has ended, unlocked or not.
    let settled: AsyncStream<Void>
    private let settledContinuation: AsyncStream<Void>.Continuation

    /// The service for `vault`, or nil when its key is not kept in the keyring.
    /// The keyring calls run on `threadPool`.
    static func ifConfigured(vault: EncryptedVault, threadPool: NIOThreadPool, logger: Logger,
                             onUnlock: @escaping @Sendable () -> Void) async -> KeyringUnlock? {
        guard let keyID = try? await vault.secretServiceKeyID() else { return nil }
        return KeyringUnlock(vault: vault, keys: SecretServiceKeySource(threadPool: threadPool), keyID: keyID,
                             logger: logger, onUnlock: onUnlock)
    }

    private init(vault: EncryptedVault, keys: SecretServiceKeySource, keyID: String, logger: Logger,
                 onUnlock: @escaping @Sendable () -> Void) {
        self.vault = vault
        self.keys = keys
        self.keyID = keyID
        self.logger = logger
        self.onUnlock = onUnlock
        (settled, settledContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func run() async throws {
        await attempt()
        settledContinuation.yield()
        // A service that ends while the group shuts down makes the group fail: stay until then.
        try? await gracefulShutdown()
    }

    private func attempt() async {
        let keyID = keyID
        let keys = keys
        do {
            let key = try await cancelWhenGracefulShutdown {
                try await abandoningOnCancel { try await keys.fetchKey(id: keyID) }
            }
            try await vault.unlock(.secretService(key))
            logger.info("vault unlocked with its key from the desktop keyring (Secret Service)")
            onUnlock()
        } catch is CancellationError {
            return
        } catch let error as VaultError {
            logger.warning("the vault stays locked: its key is kept in the desktop keyring, but \(error.reason). To recover: unlock or start the keyring, then restart the daemon; or run `sortedvault unlock` with the recovery passphrase chosen at init",
                           metadata: ["code": "\(error.code)"])
        } catch {
            logger.warning("the vault stays locked: fetching its key from the desktop keyring failed (\(error)); run `sortedvault unlock` with the recovery passphrase")
        }
    }
}
