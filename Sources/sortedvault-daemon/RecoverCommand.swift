import ArgumentParser
import Foundation
import Vault
import VaultCore
import VaultProtocol
import VaultSQLite
import SortedVaultCLI

/// `sortedvault recover --accept-rollback`: the way out after the vault refused an older copy of
/// itself (docs/rollback.md). It unlocks the vault directly (stop the daemon first) and makes its rows
/// as they are now the vault's state, at a generation newer than any seen, so later opens succeed.
/// Whatever the older copy rolled back (a revoked token, a deleted login) stays rolled back.
struct Recover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Accept the vault as it is after a rollback was detected (stop the daemon first).",
        discussion: """
            Run this only if you restored an older copy of vault.db on purpose. Items changed or deleted since that
            copy come back in their older state: sign in again to the logins you had logged out of.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Confirm: the vault as it is now becomes the current state.") var acceptRollback = false
    @Option(help: "Read the passphrase from this file descriptor instead of the terminal.") var passphraseFd: Int32?

    func run() async throws {
        try await reportingErrors {
            guard acceptRollback else {
                throw VaultError.invalidArgument("nothing was changed: pass --accept-rollback to accept the vault as it is now")
            }
            let paths = try global.paths()
            guard FileManager.default.fileExists(atPath: paths.database) else {
                throw VaultError(.notInitialized, "no vault at \(paths.database)")
            }
            let storage = try SQLiteSealedStorage(path: paths.database)
            defer { try? storage.close() }
            let vault = try await EncryptedVault.openForRecovery(storage: storage, generationRecord: GenerationFile(path: paths.generationRecord))
            let credential: UnlockCredential
            if try await vault.keySourceKinds().contains("keyfile") {
                credential = .keyFile(try KeyFile.load(from: paths.keyFile))
            } else {
                credential = .passphrase(try SecretInput.passphrase(fd: passphraseFd, prompt: "Vault passphrase: "))
            }
            try await vault.unlock(credential, acceptingRollback: true)
            print("accepted the vault as it is now (\(try await vault.itemCount()) items); start the daemon again")
        }
    }
}
