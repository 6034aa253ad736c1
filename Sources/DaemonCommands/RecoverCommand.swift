import AccessLogFile
import ArgumentParser
import FoundationEssentials
import NIOPosix
import Vault
import VaultCore
import VaultDaemon
import VaultClient
import VaultSQLite
import CLIOptions
import CLICore

/// `sortedvault recover --accept-rollback`: the way out after the vault refused an older copy of
/// itself (docs/rollback.md). With the daemon stopped (it holds ``VaultOwnerLock``, so recovery cannot
/// run beside it and no daemon starts during it) and the owner's confirmation on a terminal (or
/// `--yes`), it unlocks the vault directly and makes its rows as they are now the vault's state, at a
/// generation newer than any seen, so later opens succeed. Whatever the older copy rolled back (a
/// revoked token, a deleted login) stays rolled back, so the recovery is recorded where the owner
/// looks: the access log and the generation record.
public struct Recover: BlockingWorkCommand {
    public static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Accept the vault as it is after a rollback was detected (stop the daemon first).",
        discussion: RecoverArguments.discussion)

    @OptionGroup var options: RecoverArguments

    public init() {}

    /// Recovers; the key derivation runs on `threadPool`.
    public func perform(threadPool: NIOThreadPool) async throws {
        guard options.acceptRollback else {
            throw VaultError.invalidArgument("nothing was changed: pass --accept-rollback to accept the vault as it is now")
        }
        let paths = try options.location.paths()
        guard FileManager.default.fileExists(atPath: paths.database) else {
            throw VaultError(.notInitialized, "no vault at \(paths.database)")
        }
        let owner = try VaultOwnerLock(database: paths.database, exclusive: true)
        defer { owner.release() }
        try confirm(paths.database)
        let record = GenerationFile(path: paths.generationRecord)
        let before = (try? record.read()).flatMap { $0 }?.generation
        let storage = try SQLiteSealedStorage(path: paths.database)
        defer { try? storage.close() }
        let vault = try await EncryptedVault.openForRecovery(storage: storage, threadPool: threadPool, generationRecord: record)
        let credential: UnlockCredential
        if try await vault.keySourceKinds().contains("keyfile") {
            credential = .keyFile(try KeyFile.load(from: paths.keyFile))
        } else {
            credential = .passphrase(try SecretInput.passphrase(fd: options.passphraseFd, prompt: "Vault passphrase: "))
        }
        try await vault.unlock(credential, acceptingRollback: true)
        let items = try await vault.itemCount()
        let after = (try? record.read()).flatMap { $0 }?.generation
        let note = "accepted the vault as it is now: \(items) items, generation "
            + (before.map(String.init) ?? "unknown") + " -> " + (after.map(String.init) ?? "unknown")
        let stamp = Date().formatted(.iso8601)
        do {
            try record.recordAcceptedRollback("\(stamp) uid \(getuid()) pid \(getpid()): \(note)")
        } catch let error as VaultError {
            Array("sortedvault: the recovery is not in the generation record: \(error.reason)\n".utf8).withUnsafeBytes { StandardStreams.writeAll(2, $0) }
        }
        if !OwnerActionLog.record(path: paths.accessLog, operation: "recover", note: note) {
            Array("sortedvault: the recovery could not be written to the access log \(paths.accessLog)\n".utf8).withUnsafeBytes { StandardStreams.writeAll(2, $0) }
        }
        print("\(note); start the daemon again")
    }

    /// The owner says yes on the terminal, or passed `--yes`; anything else changes nothing.
    private func confirm(_ database: String) throws {
        if options.yes { return }
        guard isatty(STDIN_FILENO) == 1 else {
            throw VaultError.invalidArgument("nothing was changed: no terminal to confirm on; run it in a terminal, or pass --yes")
        }
        Array("""
            This makes \(database) as it is now the vault's current state. Whatever the older copy rolled back \
            (a revoked token, a deleted item) comes back. Type "accept" to go on:\u{20}
            """.utf8).withUnsafeBytes { StandardStreams.writeAll(2, $0) }
        guard let answer = readLine(), answer.trimmedWhitespace == "accept" else {
            throw VaultError.invalidArgument("nothing was changed: the recovery was not confirmed")
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
