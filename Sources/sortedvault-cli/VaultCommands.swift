import ArgumentParser
import FoundationEssentials
import CLIOptions
import VaultClient
import CLICore
import VaultCore
import VaultCrypto

struct Status: ReportingCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show whether the vault is locked, and how many items it holds.")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "JSON output.") var json = false

    func perform() async throws {
        let status = try await global.client().status()
        if json {
            print(try CLIJSON.text(status))
        } else {
            let lines = StatusReport.lines(
                locked: status.locked, items: status.items, logins: status.logins, queuedRevocations: status.queuedRevocations,
                keySources: status.keySources, autoLockMinutes: status.autoLockMinutes, version: status.version,
                socket: try global.paths().socket, pid: status.pid, uptimeSeconds: status.uptimeSeconds,
                policyFiles: status.policyFiles, policyError: status.policyError,
                accessLogFailedWrites: status.accessLogFailedWrites)
            for line in lines { print(line) }
        }
    }
}

struct Lock: ReportingCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "Lock the vault: the daemon forgets its keys.")

    @OptionGroup var global: GlobalOptions

    func perform() async throws {
        try await global.client().lockVault()
    }
}

struct Unlock: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the vault: from its key file or desktop keyring again, else with its passphrase.",
        discussion: """
            After `sortedvault lock` or an auto-lock, a key-file or keyring vault unlocks again without a passphrase: \
            the daemon re-reads the key file or asks the keyring. A passphrase is asked for only when the vault has one \
            and nothing else unlocked it.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Read the passphrase from this file descriptor instead of the terminal.") var passphraseFd: Int32?

    func perform() async throws {
        let client = try global.client()
        // Status may be denied to this program; then the daemon's answer to Unlock() decides.
        let status = try? await client.status()
        if status?.locked == false {
            print("the vault is already unlocked")
            return
        }
        let sources = status?.keySources
        if sources?.contains(where: { $0 == "keyfile" || $0 == "secret-service" }) != false {
            do {
                try await client.unlockFromKeySources()
                return
            } catch let error as VaultError where error.code == .invalidArgument {
                // Only a passphrase unlocks this vault.
            } catch let error as VaultError where error.code == .locked && sources?.contains("passphrase") != false {
                StandardStreams.reportError(error.reason)
            }
        }
        let passphrase = try SecretInput.passphrase(fd: passphraseFd, prompt: "Vault passphrase: ")
        try await client.unlock(passphrase: passphrase)
    }
}

struct ChangePassphrase: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-passphrase",
        abstract: "Change the vault's passphrase (items are not re-encrypted).",
        discussion: "With --passphrase-fd N (or piped on standard input), the old passphrase is on the first line and the new one on the second.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Read old and new passphrases, one per line, from this descriptor.") var passphraseFd: Int32?

    func perform() async throws {
        let client = try global.client()
        let (old, new): (SecureBytes, SecureBytes)
        // A descriptor, or a piped standard input: old and new passphrase, one per line.
        if let fd = passphraseFd ?? (isatty(0) == 1 ? nil : 0) {
            let both = try SecretInput.readAll(fd: fd, limit: 8192, what: "the passphrases")
            (old, new) = PassphrasePair.split(both)
        } else {
            old = try SecretInput.passphrase(fd: nil, prompt: "Current passphrase: ")
            new = try SecretInput.passphrase(fd: nil, prompt: "New passphrase: ")
            let again = try SecretInput.passphrase(fd: nil, prompt: "New passphrase again: ")
            guard new == again else { throw VaultError.invalidArgument("the new passphrases differ; nothing was changed") }
        }
        do {
            try await client.changePassphrase(from: old, to: new)
        } catch let error as VaultError where error.code == .wrongPassphrase {
            throw VaultError(.wrongPassphrase, "wrong current passphrase: nothing was changed; check it and try again")
        }
    }
}

/// Splits "old\nnew\n" into its two lines, in secure memory.
enum PassphrasePair {
    static func split(_ bytes: SecureBytes) -> (SecureBytes, SecureBytes) {
        bytes.withUnsafeBytes { raw in
            let first = raw.firstIndex(of: UInt8(ascii: "\n")) ?? raw.count
            let rest = first < raw.count ? first + 1 : raw.count
            let second = raw[rest...].firstIndex(of: UInt8(ascii: "\n")) ?? raw.count
            return (SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<first])),
                    SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[rest..<second])))
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
