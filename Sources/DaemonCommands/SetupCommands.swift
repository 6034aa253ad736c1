import ArgumentParser
import FoundationEssentials
import Logging
import NIOPosix
import Vault
import VaultCore
import VaultCrypto
import VaultDaemon
import CLICore
import VaultClient
import VaultSQLite
import VaultSecretService
import CLIOptions

public struct Init: BlockingWorkCommand {
    public static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a new vault.",
        discussion: InitArguments.discussion)

    @OptionGroup var options: InitArguments

    public init() {}

    /// Creates the vault; the keyring calls and the key derivation run on `threadPool`.
    public func perform(threadPool: NIOThreadPool) async throws {
        let paths = try options.location.paths()
        try FileManager.default.createDirectory(atPath: paths.dataDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        if FileManager.default.fileExists(atPath: paths.database) {
            throw VaultError(.alreadyInitialized, "a vault already exists at \(paths.database); nothing was changed")
        }
        var sources: [NewKeySource] = []
        var keyringKeyID: String?
        switch options.keySource {
        case .passphrase:
            sources = [.passphrase(try newPassphrase("New vault passphrase: "), cost: options.unsafeKdfCostForTesting ? .unsafeMinimumForTesting : argon2Cost)]
        case .secretService:
            // The keyring first: when it is unavailable or locked, say so before asking for anything.
            switch await SecretServiceKeyring(threadPool: threadPool).availability() {
            case .available: break
            case .locked(let error), .unavailable(let error): throw error
            }
            let recovery = try newPassphrase("Recovery passphrase (for `sortedvault unlock` when the keyring is unavailable): ")
            let key = SecureBytes(randomCount: SecretServiceKeySource.keyBytes)
            let id = SecretServiceKeySource.newKeyID()
            try await SecretServiceKeySource(threadPool: threadPool).storeKey(key, id: id, label: "sortedvault vault key (\(paths.database))")
            keyringKeyID = id
            sources = [.secretService(key, keyID: id),
                       .passphrase(recovery, cost: options.unsafeKdfCostForTesting ? .unsafeMinimumForTesting : argon2Cost)]
        case .keyfile:
            let directory = directoryOfPath(paths.keyFile)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try KeyFile.create(at: paths.keyFile)
            sources = [.keyFile(try KeyFile.load(from: paths.keyFile))]
        }
        do {
            let storage = try SQLiteSealedStorage(path: paths.database)
            _ = try await EncryptedVault.create(storage: storage, threadPool: threadPool, keySources: sources,
                                                generationRecord: GenerationFile(path: paths.generationRecord))
            try storage.close()
        } catch {
            if let keyringKeyID { try? await SecretServiceKeySource(threadPool: threadPool).deleteKey(id: keyringKeyID) }
            throw error
        }
        print("created a vault at \(paths.database)")
        if options.keySource == .keyfile { print("key file: \(paths.keyFile) (keep it private; back it up)") }
        if options.keySource == .secretService {
            print("its key is in your desktop keyring: the daemon unlocks itself whenever the keyring is unlocked")
        }
        print("next: any command starts the daemon\(options.keySource == .passphrase ? "; unlock it with `sortedvault unlock`" : "")")
    }

    /// A new passphrase from `--passphrase-fd`, or typed twice at the terminal.
    private func newPassphrase(_ prompt: String) throws -> SecureBytes {
        let passphrase: SecureBytes
        if let fd = options.passphraseFd ?? (isatty(0) == 1 ? nil : 0) {
            // A descriptor, or a piped standard input: read once, no second entry to compare.
            passphrase = try SecretInput.passphrase(fd: fd, prompt: "")
        } else {
            passphrase = try SecretInput.passphrase(fd: nil, prompt: prompt)
            let again = try SecretInput.passphrase(fd: nil, prompt: "Passphrase again: ")
            guard passphrase == again else { throw VaultError.invalidArgument("the passphrases differ; nothing was created") }
        }
        guard passphrase.count > 0 else { throw VaultError.invalidArgument("the passphrase must not be empty") }
        return passphrase
    }

    private var argon2Cost: Argon2Cost {
        switch options.kdfCost {
        case .interactive: return .interactive
        case .moderate: return .moderate
        case .sensitive: return .sensitive
        }
    }
}

public struct DaemonCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the daemon in the foreground (systemd runs this; other commands start it on demand).")

    @OptionGroup var options: DaemonArguments

    public init() {}
    var global: PathOptions { options.location }
    var unsafeClockFile: String? { options.unsafeClockFile }
    var socketCheckSeconds: Int { options.socketCheckSeconds }
    var accessLogMaxBytes: Int { options.accessLogMaxBytes }

    public func run() async throws {
        let listener = DaemonConfiguration.systemdListener()
        ProcessHardening.closeInheritedDescriptors(keeping: listener)
        let level = Logger.Level(rawValue: options.logLevel.rawValue) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = EscapingLogHandler(wrapping: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "sortedvault.daemon")
        ProcessHardening.warnWhenSecretsCanBeSwapped(logger: logger)
        let socket = try? global.paths().socket
        do {
            guard socketCheckSeconds > 0 else { throw fail("--socket-check-seconds must be at least 1", .usage) }
            var configuration = DaemonConfiguration(paths: try global.paths(), inheritedListener: listener,
                                                    socketCheckInterval: .seconds(socketCheckSeconds))
            configuration.accessLogMaxBytes = accessLogMaxBytes
            configuration.openFleet = SortedVaultDaemon.fleetOpener.withLock { $0 }
            if let unsafeClockFile {
                #if DEBUG
                logger.warning("test clock in use: time comes from \(unsafeClockFile)")
                let file = try FileClock(path: unsafeClockFile)
                configuration.clock = file
                configuration.sleeper = FileSleepClock(file: file)
                #else
                throw fail("--unsafe-clock-file \(unsafeClockFile): this build has no test clock (only test builds do)", .usage)
                #endif
            }
            try await VaultDaemon.Daemon.run(configuration, logger: logger)
        } catch is FleetProgramNeeded {
            // The settings name a fleet's database: the fleet daemon serves it, with these arguments
            // (systemd's socket, descriptor 3, stays open across exec). Returns only when it cannot run.
            let failure = Sibling.exec(FleetProgramNeeded.program, Array(CommandLine.arguments.dropFirst()))
            let reason = "settings.toml names a fleet database (backend = \"postgresql\"), which \(FleetProgramNeeded.program) serves, not this program; \(failure.message) (packaged as sortedvault-fleet)"
            if let socket { StartFailureReport.write(reason, socket: socket) }
            throw fail(reason, .failure)
        } catch let error as DaemonError {
            // The command that started this daemon shows the reason (its stderr is /dev/null).
            if let socket, !error.anotherDaemonServes { StartFailureReport.write(error.description, socket: socket) }
            throw fail(error.description, .failure)
        } catch let error as VaultError {
            if let socket { StartFailureReport.write(error.reason, socket: socket) }
            throw fail(error.reason, ExitStatus(error.code))
        }
    }
}


#if canImport(Glibc)
import Glibc
#endif
