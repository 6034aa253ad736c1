import AccessLogFile
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import BoundedJSON
import CLICore
import CLIOptions
import VaultClient
import VaultCore
import VaultCrypto
import VaultImport

/// `sortedvault import --scan`, `sortedvault import KIND` and `sortedvault import FILE.age`: moving
/// in the plaintext credentials other tools left on disk (docs/moving-in.md), and restoring a
/// backup (docs/backup.md).
struct Import: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Move plaintext credentials other tools left on disk into the vault, or restore a backup.",
        discussion: """
            `sortedvault import --scan` looks in the places git's store helper, docker, netrc, gh, twine \
            and npm keep credentials in plain text, and prints what it found (file, kind, host and user, \
            never the secret) and what importing would do. Nothing changes.

            `sortedvault import KIND` stores what it found of that kind under the names the matching \
            helper asks for (git-credential-sortedvault, docker-credential-sortedvault, the Python keyring \
            backend), so they find it at once. KIND is one of: \(ImportSource.allCases.map(\.rawValue).joined(separator: ", ")). \
            Running it again changes nothing; an item already in the vault is kept unless \
            --on-conflict replace. With --remove-source, once the vault has acknowledged every item, the \
            file is rewritten without its secrets: atomically, its mode kept, every other byte as it was \
            (and the original kept as FILE.sortedvault-backup with --keep-backup).

            `sortedvault import pass` reads every entry of your pass store through `pass show` (your gpg \
            and agent): docker-credential-pass logins land where docker's helper asks, any other entry \
            NAME/…/LEAF as service pass:NAME/…, account LEAF, with the whole entry as the secret.

            `sortedvault import secret-service` reads every item of the desktop keyring's default \
            collection (unlocked: it never prompts), attributes kept: git-credential-libsecret's and \
            Python keyring's items land where our helpers ask, others by their `service` attribute.

            `sortedvault import FILE.age` restores a backup made by `sortedvault export` (or the same \
            format sealed by `age`): with --identity FILE for a file sealed to an age recipient, else \
            for its passphrase (asked, or read from --passphrase-fd N). Items and logins already in the \
            vault follow --on-conflict the same way.
            """)

    enum Conflict: String, ExpressibleByArgument, CaseIterable {
        case keep, replace
    }

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Only look and report: change nothing.") var scan = false
    @Argument(help: "What to import: \(ImportSource.allCases.map(\.rawValue).joined(separator: ", ")), pass, secret-service, or a backup FILE.age.") var kind: String?
    @Option(help: "Import from this file instead of the usual places.") var file: String?
    @Option(help: "An item already in the vault under the same name: keep it, or replace it.") var onConflict: Conflict = .keep
    @Flag(help: "Rewrite the source files without their secrets once the vault holds them.") var removeSource = false
    @Flag(help: "With --remove-source: keep the original as FILE.sortedvault-backup.") var keepBackup = false
    @Flag(help: "Then point git's credential.helper (git-credentials) or docker's credsStore (docker-config) at sortedvault, saying what it was.")
    var configure = false
    @Option(name: .customLong("identity"), help: "A backup sealed to an age recipient: its identity file (age-keygen's); repeat for more.") var identities: [String] = []
    @Option(help: "A backup sealed for a passphrase: read it from this file descriptor instead of the terminal.") var passphraseFd: Int32?

    /// The kinds that are stores rather than files: `pass` and the desktop keyring.
    static let storeKinds: Set<String> = ["pass", "secret-service"]

    /// A backup to restore rather than a KIND: a path (it has a slash, or ends in `.age`).
    private var backupPath: String? {
        guard let kind, ImportSource(rawValue: kind) == nil, !Self.storeKinds.contains(kind), kind.contains("/" as Character) || kind.hasSuffix(".age") else { return nil }
        return kind
    }

    func validate() throws {
        if scan && kind != nil { throw ValidationError("--scan looks everywhere: give either --scan or a KIND, not both") }
        if !scan && kind == nil { throw ValidationError("say what to import (a KIND), or --scan to see what there is") }
        if Self.storeKinds.contains(kind ?? ""), removeSource || file != nil {
            throw ValidationError("pass and the desktop keyring are encrypted stores and stay as they are: --remove-source and --file go with a plaintext KIND")
        }
        if let kind, ImportSource(rawValue: kind) == nil, !Self.storeKinds.contains(kind), backupPath == nil {
            throw ValidationError("unknown KIND \(kind.debugDescription): one of \(ImportSource.allCases.map(\.rawValue).joined(separator: ", ")), pass, secret-service, or a backup FILE.age")
        }
        if backupPath != nil, removeSource || file != nil {
            throw ValidationError("a backup is restored as it is: --remove-source and --file go with a KIND")
        }
        if backupPath == nil, !identities.isEmpty || passphraseFd != nil {
            throw ValidationError("--identity and --passphrase-fd go with a backup FILE.age")
        }
        if !identities.isEmpty && passphraseFd != nil {
            throw ValidationError("a backup is sealed for identities or for a passphrase: give --identity or --passphrase-fd, not both")
        }
        if keepBackup && !removeSource { throw ValidationError("--keep-backup goes with --remove-source") }
        if configure, kind != ImportSource.gitCredentials.rawValue, kind != ImportSource.dockerConfig.rawValue {
            throw ValidationError("--configure switches git's credential.helper (with git-credentials) or docker's credsStore (with docker-config)")
        }
        if file != nil && kind == nil { throw ValidationError("--file goes with a KIND") }
    }

    func perform() async throws {
        if let backupPath {
            let restore = BackupRestore(path: backupPath, identityFiles: identities, passphraseFd: passphraseFd, replace: onConflict == .replace)
            let (report, note) = try await restore.run(client: try global.client(), sessions: try global.sessionClient())
            print(report)
            try recordOwnerLine(note)
            return
        }
        if Self.storeKinds.contains(kind ?? "") {
            let (report, note) = kind == "pass"
                ? try await PassImport(environment: ProcessInfo.processInfo.environment, replace: onConflict == .replace).run(client: try global.client())
                : try await KeyringImport(replace: onConflict == .replace).run(client: try global.client())
            print(report)
            try recordOwnerLine(note)
            return
        }
        let locations = try self.locations()
        if scan {
            try await report(locations)
        } else {
            try await importEach(locations)
        }
    }

    /// The files to look at: `--file`, or every known place (of KIND).
    private func locations() throws -> [ScanLocation] {
        let environment = ProcessInfo.processInfo.environment
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw VaultError.invalidArgument("HOME is not set (or not absolute): set it and try again")
        }
        if let file, let kind, let source = ImportSource(rawValue: kind) {
            return [ScanLocation(source: source, path: file, reason: "--file")]
        }
        let helperLines = GitConfigReader.lines(GitHelperLines.configArguments(environment: environment))
        let all = ScanLocations(home: home, environment: environment).all(gitHelperLines: helperLines)
        guard let kind else { return all }
        return all.filter { $0.source.rawValue == kind }
    }

    /// What is there and what importing would do; reads the vault's names, changes nothing.
    private func report(_ locations: [ScanLocation]) async throws {
        let client = try? await global.client()
        var lines: [String] = []
        var count = 0
        for location in locations {
            guard let (_, found) = try Self.read(location) else { continue }
            for credential in found {
                count += 1
                let destination = try ImportNaming.destination(for: credential)
                let plan: String
                if let destination {
                    let present = try await client?.exists(destination.key) ?? false
                    plan = present ? "already in the vault as \(destination.key): kept (--on-conflict replace replaces it)"
                                   : "would be stored as \(destination.key)"
                } else {
                    plan = "no helper asks for it by name: left where it is"
                }
                lines.append("\(location.path): \(credential.source), \(credential.origin)"
                             + (credential.user.map { ", user \($0)" } ?? "") + " — \(plan)")
            }
        }
        lines.append(count == 0 ? "No plaintext credentials found." :
            "\(count) plaintext credential\(count == 1 ? "" : "s") found. Import one kind with `sortedvault import KIND`; nothing was changed.")
        print(lines.joined(separator: "\n"))
    }

    private func importEach(_ locations: [ScanLocation]) async throws {
        let client = try await global.client()
        var tally = MoveIn.Tally(), skipped = 0, rewritten: [String] = [], configured: [String] = []
        for location in locations {
            guard let (original, found) = try Self.read(location) else {
                if file != nil { throw VaultError(.notFound, "\(location.path) does not exist: nothing was imported") }
                continue
            }
            // Every item the vault acknowledges before the source is touched.
            var imported: [FoundCredential] = []
            for credential in found {
                guard let destination = try ImportNaming.destination(for: credential) else { skipped += 1; continue }
                if try await MoveIn.store(credential.secret, at: destination.key, options: try StoreOptions(label: destination.label),
                                          replace: onConflict == .replace, client: client, into: &tally, source: location.path) {
                    imported.append(credential)
                }
            }
            // docker's credsStore is switched in the same rewrite, once every item is acknowledged.
            var edits: [SourceEdit] = []
            if configure, location.source == .dockerConfig {
                edits.append(try DockerConfigFile.settingCredentialStore(Self.helperName, in: original, path: location.path))
                let old = original.withUnsafeBytes { try? JSONValue.parse($0) }?.objectValue?["credsStore"]?.stringValue
                configured.append("docker's credsStore in \(location.path) was \(old.map { "\"\($0)\"" } ?? "not set"); now \"\(Self.helperName)\".")
            }
            let removing = removeSource ? imported : []
            guard !removing.isEmpty || !edits.isEmpty else { continue }
            // A credential kept (its secret differs from the vault's) stays in the file: nothing is lost.
            let cleaned = try SourceRewriter.removing(removing, from: original, extraEdits: edits)
            try AtomicFileReplacer.replace(path: location.path, expecting: original, with: cleaned, keepBackup: keepBackup)
            if !removing.isEmpty { rewritten.append(location.path) }
        }
        if configure, kind == ImportSource.gitCredentials.rawValue { configured.append(try Self.configureGit()) }
        var summary = tally.lines()
        if skipped > 0 { summary.append("Left \(skipped) credential\(skipped == 1 ? "" : "s") no helper asks for by name.") }
        for path in rewritten {
            summary.append("Rewrote \(path) without the imported secrets" + (keepBackup ? " (original: \(path)\(AtomicFileReplacer.backupSuffix))." : "."))
        }
        summary += configured
        print(summary.joined(separator: "\n"))
        let files = locations.map(\.path).joined(separator: ", ")
        try recordOwnerLine("imported \(kind ?? "") from \(files): \(tally.note), \(skipped) without a name"
                            + (rewritten.isEmpty ? "" : ", rewrote \(rewritten.joined(separator: ", "))"))
    }

    /// The name git and docker know our helpers by: `git-credential-sortedvault`,
    /// `docker-credential-sortedvault`.
    static let helperName = "sortedvault"

    /// Points git's global `credential.helper` at ours (every value of it replaced by one), and says
    /// what it was, so the user can put it back.
    static func configureGit() throws -> String {
        let old = GitConfigReader.lines(["git", "config", "--global", "--get-all", "credential.helper"]).filter { !$0.isEmpty }
        if old == [helperName] { return "git's credential.helper is \"\(helperName)\" already." }
        guard GitConfigReader.status(["git", "config", "--global", "--replace-all", "credential.helper", helperName]) == 0 else {
            throw VaultError.storageFailure("`git config --global credential.helper \(helperName)` failed; the items are imported, set it yourself")
        }
        let was = old.isEmpty ? "not set" : old.map { "\"\($0)\"" }.joined(separator: ", ")
        return "git's credential.helper (global) was \(was); now \"\(helperName)\"."
    }

    /// Every import is an owner line in the access log, where `sortedvault log` shows it: what was
    /// imported from where, and counts, never an item's name or secret.
    private func recordOwnerLine(_ note: String) throws {
        guard OwnerActionLog.record(path: try global.paths().accessLog, operation: "import", note: note) else {
            StandardStreams.reportError("the import is done, but the access log could not record it")
            return
        }
    }

    /// The file's bytes and what it holds; nil when there is no such file.
    private static func read(_ location: ScanLocation) throws -> (SecureBytes, [FoundCredential])? {
        guard let original = try ImportFile.read(path: location.path) else { return nil }
        let found = try original.withUnsafeBytes { try ImportScan.parse($0, source: location.source, path: location.path) }
        return (original, found)
    }
}

/// Runs `git config …` for the helper lines; no git, or no such setting, is no lines.
enum GitConfigReader {
    /// Runs `argv` (a `git config` change), its output discarded; its exit status, 127 when it
    /// could not start.
    static func status(_ argv: [String]) -> Int32 {
        guard let run = try? ChildProcess.run(argv, stdin: .null, stdout: .null, stderr: .null, reading: { _, _ in }) else {
            return 127
        }
        return ChildProcess.exitStatus(run.waitStatus)
    }

    static func lines(_ argv: [String]) -> [String] {
        guard let run = try? ChildProcess.run(argv, stdin: .inherited, stdout: .pipe, stderr: .null, reading: { output, _ in
            text(from: output)
        }) else { return [] }
        let output = run.output
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return Array(lines.dropLast(output.last == 0x0A ? 1 : 0))
    }

    /// What the child writes to `descriptor`, until it closes it or 64 KiB are read.
    private static func text(from descriptor: Int32) -> [UInt8] {
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while output.count < 1 << 16 {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output.append(contentsOf: buffer[0..<count])
        }
        return output
    }
}
