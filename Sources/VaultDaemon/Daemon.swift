import Dispatch
import Foundation
import Logging
import Varlink
import Vault
import VaultCore
import VaultPolicy
import VaultProtocol
import VaultOAuthHTTP
import VaultSQLite
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

/// What `sortedvault daemon` needs to run.
public struct DaemonConfiguration: Sendable {
    public var paths: VaultPaths
    public var clock: any VaultClock
    /// A listening socket handed over by systemd (`LISTEN_FDS`), used instead of binding.
    public var inheritedListener: CInt?

    public init(paths: VaultPaths, clock: any VaultClock = SystemClock(), inheritedListener: CInt? = nil) {
        self.paths = paths
        self.clock = clock
        self.inheritedListener = inheritedListener
    }

    /// The descriptor systemd passed, if this process was socket-activated (sd_listen_fds(3)).
    public static func systemdListener(environment: [String: String] = ProcessInfo.processInfo.environment) -> CInt? {
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else { return nil }
        return 3  // SD_LISTEN_FDS_START
    }
}

/// The per-user daemon: one process that owns the vault file and serves it on a Unix socket.
///
/// Start-up fails closed: a bad policy, an unsafe socket directory, a missing key file or a damaged
/// database stops it with an error that names the file. SIGTERM and SIGINT shut it down cleanly:
/// socket removed, keys zeroed, database closed.
public enum Daemon {
    /// Runs until SIGTERM or SIGINT, then shuts down cleanly.
    public static func run(_ configuration: DaemonConfiguration, logger: Logger) async throws {
        try ProcessHardening.apply()
        let daemon = try await start(configuration, logger: logger)
        let signal = await waitForTerminationSignal()
        logger.info("shutting down", metadata: ["signal": "\(signal)"])
        try await daemon.shutdown()
    }

    /// Opens the vault, checks the policy and the socket directory, and starts serving.
    public static func start(_ configuration: DaemonConfiguration, logger: Logger) async throws -> RunningDaemon {
        let paths = configuration.paths
        let uid = geteuid()
        umask(0o077)  // everything the daemon creates is private to its user

        let policy: Policy
        let settings: DaemonSettings
        do {
            if let directory = paths.policyDirectory {
                policy = try Policy.load(directory: directory, daemonUID: uid)
                settings = try DaemonSettings.load(directory: directory, daemonUID: uid)
            } else {
                policy = Policy.builtInDefault(daemonUID: uid)
                settings = DaemonSettings.builtInDefault
            }
        } catch let error as PolicyError {
            throw DaemonError("refusing to start: \(error)")
        }

        guard FileManager.default.fileExists(atPath: paths.database) else {
            throw DaemonError("no vault at \(paths.database): run `sortedvault init` first")
        }
        let socketDirectory = try SocketDirectory(socketPath: paths.socket, keepSocket: configuration.inheritedListener != nil)
        let storage: SQLiteSealedStorage
        let vault: EncryptedVault
        do {
            storage = try SQLiteSealedStorage(path: paths.database)
            vault = try await EncryptedVault(storage: storage, clock: configuration.clock,
                                           generationRecord: GenerationFile(path: paths.generationRecord))
            if try await vault.keySourceKinds().contains("keyfile") {
                do {
                    try await vault.unlock(.keyFile(try KeyFile.load(from: paths.keyFile)))
                } catch let error as VaultError {
                    throw DaemonError("the vault is protected by a key file, but it did not unlock: \(error.reason)")
                }
            }
        } catch {
            socketDirectory.release()
            throw error
        }
        let keyringUnlock = await KeyringBackends.unlockFromKeyring(vault, logger: logger)
        KeyringBackends.checkItemKeyring(settings, logger: logger)

        let access = AccessControl(policy: policy, logger: logger)
        let activity = ActivityClock(clock: configuration.clock)
        let sessions = SessionManager(
            store: vault, transport: URLSessionTransport(), clock: configuration.clock,
            configuration: SessionManager.Configuration(
                minValid: TimeInterval(settings.sessionMinValidSeconds),
                refreshAhead: TimeInterval(settings.sessionProactiveRefreshSeconds),
                proactiveRefresh: settings.sessionProactiveRefreshSeconds > 0),
            logger: logger)
        let service = VaultService(
            vault: vault, items: KeyringBackends.itemStore(for: settings, vault: vault, clock: configuration.clock),
            access: access, throttle: UnlockThrottle(clock: configuration.clock),
            activity: activity, settings: settings, logger: logger,
            onUnlock: { Task { await resumeSessions(sessions, logger: logger) } })
        let sessionService = SessionService(sessions: sessions, access: access, activity: activity,
                                            clock: configuration.clock, logger: logger)
        var serverConfiguration = VarlinkServerConfiguration()
        serverConfiguration.idleTimeout = .seconds(settings.idleConnectionTimeoutSeconds)
        serverConfiguration.maxConnectionsPerUID = settings.maxConnectionsPerUID
        serverConfiguration.admit = { peer in
            let admitted = access.admits(peer)
            if !admitted {
                logger.notice("connection refused: no policy rule admits this peer",
                              metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "exe": "\(peer.executable ?? "?")"])
            }
            return admitted
        }
        let server = VarlinkServer(
            info: VarlinkServiceInfo(vendor: "sortedvault", product: "sortedvault", version: SortedVaultVersion.current,
                                     url: "https://github.com/sortedvault/sortedvault"),
            interfaces: [service, sessionService], configuration: serverConfiguration, logger: logger)
        do {
            if let fd = configuration.inheritedListener {
                try await server.adopt(listeningDescriptor: fd)
            } else {
                try await server.bind(unixSocketPath: paths.socket)
            }
        } catch {
            try? storage.close()
            socketDirectory.release()
            throw DaemonError("cannot listen on \(paths.socket): \(error)")
        }
        let locked = await vault.isLocked
        logger.info("serving", metadata: [
            "socket": "\(paths.socket)", "database": "\(paths.database)",
            "locked": "\(locked)", "autoLockMinutes": "\(settings.autoLockMinutes)", "backend": "\(settings.backend.rawValue)",
        ])
        let autoLock = Task {
            await runAutoLock(vault: vault, activity: activity, minutes: settings.autoLockMinutes, logger: logger)
        }
        if !locked { await resumeSessions(sessions, logger: logger) }
        var background = [autoLock, Task { await SessionWorkLoop.run(sessions, clock: configuration.clock) }]
        if let keyringUnlock {
            background.append(keyringUnlock)
            // The keyring may unlock the vault later, in the background: then resume the logins too.
            background.append(Task {
                await keyringUnlock.value
                if !(await vault.isLocked) { await resumeSessions(sessions, logger: logger) }
            })
        }
        return RunningDaemon(server: server, vault: vault, storage: storage, socketDirectory: socketDirectory,
                             background: background, logger: logger)
    }

    /// Lets the session manager finish interrupted logouts and schedule refreshes once the vault is open.
    static func resumeSessions(_ sessions: SessionManager, logger: Logger) async {
        do {
            try await sessions.resume()
        } catch {
            logger.warning("stored logins could not be resumed; they are refreshed on demand", metadata: ["error": "\(error)"])
        }
    }

    /// Locks the vault once it has been idle for the configured minutes. Sleeps until the next
    /// deadline instead of polling.
    static func runAutoLock(vault: EncryptedVault, activity: ActivityClock, minutes: Int, logger: Logger) async {
        guard minutes > 0 else { return }
        while !Task.isCancelled {
            guard let remaining = activity.secondsUntilAutoLock(idleMinutes: minutes) else { return }
            if remaining <= 0 {
                if !(await vault.isLocked) {
                    await vault.lock()
                    logger.info("vault locked after \(minutes) idle minutes")
                }
                activity.touch()  // the next check is a full period away
                continue
            }
            try? await Task.sleep(for: .seconds(remaining))
        }
    }

    /// Waits for SIGTERM or SIGINT and returns its number.
    static func waitForTerminationSignal() async -> Int32 {
        await withCheckedContinuation { continuation in
            let queue = DispatchQueue(label: "sortedvault.signals")
            let once = SignalOnce(continuation)
            for number in [SIGTERM, SIGINT] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { once.fire(number) }
                source.resume()
                once.retain(source)
            }
        }
    }
}

/// A daemon that is serving. Call ``shutdown()`` exactly once.
public final class RunningDaemon: Sendable {
    private let server: VarlinkServer
    private let vault: EncryptedVault
    private let storage: SQLiteSealedStorage
    private let socketDirectory: SocketDirectory
    private let background: [Task<Void, Never>]
    private let logger: Logger

    init(server: VarlinkServer, vault: EncryptedVault, storage: SQLiteSealedStorage, socketDirectory: SocketDirectory,
         background: [Task<Void, Never>], logger: Logger) {
        self.server = server
        self.vault = vault
        self.storage = storage
        self.socketDirectory = socketDirectory
        self.background = background
        self.logger = logger
    }

    /// Stops serving, removes the socket, zeroes the keys and closes the database.
    public func shutdown() async throws {
        background.forEach { $0.cancel() }
        try await server.shutdown()
        await vault.lock()
        try storage.close()
        socketDirectory.release()
        logger.info("stopped")
    }
}

/// Resumes a continuation on the first signal only, and keeps the signal sources alive.
private final class SignalOnce: @unchecked Sendable {
    private var continuation: CheckedContinuation<Int32, Never>?
    private var sources: [DispatchSourceSignal] = []
    private let lock = NSLock()

    init(_ continuation: CheckedContinuation<Int32, Never>) { self.continuation = continuation }

    func retain(_ source: DispatchSourceSignal) { lock.withLock { sources.append(source) } }

    func fire(_ number: Int32) {
        let pending = lock.withLock { () -> CheckedContinuation<Int32, Never>? in
            defer { continuation = nil }
            return continuation
        }
        pending?.resume(returning: number)
    }
}
