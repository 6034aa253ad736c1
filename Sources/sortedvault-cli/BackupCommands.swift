import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import CLICore
import CLIOptions
import VaultAge
import VaultAPI
import VaultClient
import VaultCore
import VaultCrypto
import VaultImport
import VaultSession

/// `sortedvault export --to FILE.age`: a sealed backup of every item and login (docs/backup.md).
struct Export: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a sealed backup of every item and login, in the age format.",
        discussion: """
            The daemon reads every item and login (refresh tokens included) from one snapshot and seals \
            them itself, so nothing leaves it in plain text. The file is in the age v1 format: `age -d` \
            opens it, and `sortedvault import FILE.age` restores it, here or on another machine.

            Seal it for a passphrase (asked twice on the terminal, or read from --passphrase-fd N), or \
            for one or more age recipients (--recipient age1…, --recipients-file FILE, as `age -R` \
            reads). The file is created with mode 0600 and never overwrites an existing one. The \
            access log records the export and whom it was sealed for.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "The backup file to create (it must not exist).") var to: String
    @Option(name: .customLong("recipient"), help: "Seal for this age recipient (age1…); repeat for more.") var recipients: [String] = []
    @Option(help: "Seal for every recipient in this file (one age1… per line, # comments).") var recipientsFile: String?
    @Option(help: "Read the passphrase from this file descriptor instead of the terminal.") var passphraseFd: Int32?
    @Flag(help: "Write age's PEM text form (-----BEGIN AGE ENCRYPTED FILE-----).") var armor = false

    func validate() throws {
        if passphraseFd != nil && (!recipients.isEmpty || recipientsFile != nil) {
            throw ValidationError("seal for a passphrase or for recipients, not both: age seals a passphrase file for nobody else")
        }
    }

    func perform() async throws {
        var all = recipients
        if let recipientsFile { all += try Self.recipients(inFile: recipientsFile) }
        let passphrase: SecureBytes? = all.isEmpty ? try Self.newPassphrase(fd: passphraseFd) : nil
        guard access(to, F_OK) != 0 else {
            throw VaultError.invalidArgument("\(to) exists already: nothing was written; remove it or choose another name")
        }
        let backup = try await global.client().export(passphrase: passphrase, recipients: all.isEmpty ? nil : all, armored: armor)
        do {
            try AtomicFileReplacer.create(path: to, contents: backup.file)
        } catch let error as ImportError {
            throw VaultError.storageFailure(error.description)
        }
        print("Wrote \(to): \(backup.items) item\(backup.items == 1 ? "" : "s") and \(backup.logins) login\(backup.logins == 1 ? "" : "s"), sealed for "
              + (all.isEmpty ? "a passphrase" : "\(all.count) recipient\(all.count == 1 ? "" : "s")") + ".")
    }

    /// The `age1…` lines of a recipients file, as `age -R` reads it.
    static func recipients(inFile path: String) throws -> [String] {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw VaultError(.notFound, "cannot read the recipients file \(path)")
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).map(\.trimmedWhitespace)
        let found = lines.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard !found.isEmpty else { throw VaultError.invalidArgument("the recipients file \(path) names no recipient") }
        return found
    }

    /// From the descriptor as it is; on the terminal, asked twice.
    static func newPassphrase(fd: Int32?) throws -> SecureBytes {
        if fd != nil || isatty(0) != 1 { return try SecretInput.passphrase(fd: fd, prompt: "") }
        let first = try SecretInput.promptNoEcho("Passphrase for the backup: ")
        let again = try SecretInput.promptNoEcho("The same passphrase again: ")
        guard first == again else { throw VaultError.invalidArgument("the two passphrases differ: nothing was written") }
        guard first.count > 0 else { throw VaultError.invalidArgument("the passphrase is empty: nothing was written") }
        return first
    }
}

/// `sortedvault import FILE.age`: restores a backup made by `export` (or any age file of the format).
struct BackupRestore {
    let path: String
    let identityFiles: [String]
    let passphraseFd: Int32?
    let replace: Bool

    /// The age file's plaintext: for the identities of `--identity`, else for a passphrase.
    func open() throws -> SecureBytes {
        guard let file = try ImportFile.read(path: path, limit: Self.maximumFileBytes) else {
            throw VaultError(.notFound, "\(path) does not exist: nothing was imported")
        }
        let identities: [AgeIdentity]
        if identityFiles.isEmpty {
            identities = [.scrypt(passphrase: try SecretInput.passphrase(fd: passphraseFd, prompt: "Passphrase of \(path): "))]
        } else {
            identities = try identityFiles.flatMap { identityFile -> [AgeIdentity] in
                guard let contents = try ImportFile.read(path: identityFile) else {
                    throw VaultError(.notFound, "the identity file \(identityFile) does not exist")
                }
                return try Self.ageErrors { try AgeIdentity.identities(inFile: contents) }
            }
        }
        return try Self.ageErrors { try AgeDecryptor(identities: identities).open(file) }
    }

    /// What each line did, in order: items through the same rule as every import, logins through
    /// the daemon's Restore.
    func run(client: VaultClient, sessions: SessionClient) async throws -> (report: String, note: String) {
        let backup: BackupDocument
        do {
            backup = try BackupDocument(plaintext: try open())
        } catch let error as BackupFormatError {
            throw VaultError(.unsupportedFormat, "\(path) is not a sortedvault backup: \(error); nothing was imported")
        }
        var tally = MoveIn.Tally()
        let now = Date()  // the CLI's own clock: an item the daemon would refuse as expired is counted here
        var logins: [LoginRestoreOutcome: [String]] = [:]
        for line in backup.lines {
            switch line {
            case .item(let item, let secret):
                let key = try VaultInterface.ItemName(service: item.service, account: item.account).key()
                let options = try StoreOptions(label: item.label, attributes: item.attributes,
                                               expiresAt: item.expires.map(Date.init(timeIntervalSince1970:)))
                if let expires = options.expiresAt, expires <= now { tally.expired += 1; continue }
                try await MoveIn.store(secret, at: key, options: options, replace: replace, client: client, into: &tally, source: path)
            case .login(let login):
                let outcome = try await sessions.restore(login, replace: replace)
                logins[outcome, default: []].append("\(login.service)/\(login.account)")
            }
        }
        var summary = ["Restored from \(path) (made \(Self.date(backup.header.created)))."]
        summary += tally.lines()
        let restored = logins[.restored]?.count ?? 0
        summary.append("Logins: \(restored) restored, \(logins[.same]?.count ?? 0) already there.")
        if let kept = logins[.kept] {
            summary.append("Kept \(kept.count) login\(kept.count == 1 ? "" : "s") stored with other tokens (refreshed since the backup, most likely; --on-conflict replace puts the backup's back): " + kept.joined(separator: ", "))
        }
        if let ended = logins[.ended] {
            summary.append("Skipped \(ended.count) login\(ended.count == 1 ? "" : "s") that ended since the backup (sign in again): " + ended.joined(separator: ", "))
        }
        let note = "restored the backup \(path) (made \(Self.date(backup.header.created))): \(tally.note), logins \(restored) restored, "
            + "\(logins[.same]?.count ?? 0) already there, \(logins[.kept]?.count ?? 0) kept, \(logins[.ended]?.count ?? 0) ended"
        return (summary.joined(separator: "\n"), note)
    }

    static let maximumFileBytes = 256 << 20

    static func date(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds).formatted(.iso8601)
    }

    /// An age failure as the CLI reports it: a wrong key is exit 5, a damaged file exit 6.
    static func ageErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as AgeError {
            switch error.code {
            case .wrongPassphrase, .noIdentityMatched:
                throw VaultError(.wrongPassphrase, "\(error.reason): nothing was imported")
            case .invalidIdentity:
                throw VaultError.invalidArgument(error.reason)
            case .unsupportedVersion:
                throw VaultError(.unsupportedFormat, "\(error.reason): nothing was imported")
            default:
                throw VaultError.integrityFailure("the backup is damaged or was changed (\(error.reason)): nothing was imported")
            }
        }
    }
}
