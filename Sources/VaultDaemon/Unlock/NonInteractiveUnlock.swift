import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Vault
import VaultCore
import VaultCrypto
import VaultSecretService

/// Unlocks the vault again without a passphrase, from the sources start-up uses — the key file,
/// the desktop keyring — for `Unlock` without a passphrase (`sortedvault unlock`) after a `lock`
/// or an auto-lock. Each source is asked afresh: the key file is read again, the keyring asked
/// again (it may have been unlocked since).
struct NonInteractiveUnlock: Sendable {
    let vault: EncryptedVault
    let keyFilePath: String
    /// The keyring holding the vault's key, if a slot says so.
    let keyring: SecretServiceKeySource
    /// How long the keyring may take to answer before the attempt gives up (it may be hung).
    var keyringWait: Duration = .seconds(5)
    /// The clock `keyringWait` runs on: the daemon's injected sleeper.
    var sleeper: any Clock<Duration> = ContinuousClock()

    /// Tries each key-file or keyring slot of the vault, in slot order; returns the kind that unlocked it.
    /// Throws `.locked` with every source's reason when none did, and `.invalidArgument` when the
    /// vault has no such source (it unlocks only with its passphrase).
    func unlock() async throws -> String {
        var failures: [String] = []
        for kind in try await vault.keySourceKinds() {
            do {
                switch kind {
                case "keyfile":
                    try await vault.unlock(.keyFile(try KeyFile.load(from: keyFilePath)))
                case "secret-service":
                    guard let id = try await vault.secretServiceKeyID() else { continue }
                    try await vault.unlock(.secretService(try await fetchFromKeyring(id: id)))
                default:
                    continue
                }
                return kind
            } catch let error as VaultError {
                failures.append(kind == "keyfile" ? "the key file \(keyFilePath) did not unlock it: \(error.reason)"
                                                  : "the desktop keyring did not give its key: \(error.reason)")
            }
        }
        guard !failures.isEmpty else {
            throw VaultError.invalidArgument("passphrase is missing: this vault has no key file or keyring key, only its passphrase")
        }
        throw VaultError(.locked, "the vault stays locked: " + failures.joined(separator: "; ")
                         + ((try? await vault.keySourceKinds().contains("passphrase")) == true ? "; or unlock it with its passphrase" : ""))
    }

    /// The keyring's answer, or `.unavailable` once `keyringWait` has passed on `sleeper` (the
    /// call itself cannot be cancelled; its late answer is dropped).
    private func fetchFromKeyring(id: String) async throws -> SecureBytes {
        let wait = keyringWait
        let keyring = keyring
        return try await DeadlineRace.run(limit: wait, clock: sleeper, { try await keyring.fetchKey(id: id) }) {
            .failure(VaultError(.unavailable, "the desktop keyring did not answer within \(wait)"))
        }
    }
}
