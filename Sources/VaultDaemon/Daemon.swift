import Foundation
import Logging
import Varlink
import Vault
import VaultCore
import VaultPolicy
import VaultProtocol
import VaultOAuthHTTP
import VaultOIDC
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
    /// What the daemon's timers (auto-lock, the socket check) sleep on; tests pass a ``FileSleepClock``.
    public var sleeper: any Clock<Duration>
    /// How often the daemon checks that its socket path still leads to it (see ``SocketWatch``).
    public var socketCheckInterval: Duration
    /// The access log file's cap; it is rotated once (to `access.log.1`) past it.
    public var accessLogMaxBytes = 1 << 20

    public init(paths: VaultPaths, clock: any VaultClock = SystemClock(), inheritedListener: CInt? = nil,
                sleeper: any Clock<Duration> = ContinuousClock(), socketCheckInterval: Duration = .seconds(60)) {
        self.paths = paths
        self.clock = clock
        self.inheritedListener = inheritedListener
        self.sleeper = sleeper
        self.socketCheckInterval = socketCheckInterval
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
    /// Runs until SIGTERM or SIGINT, or until its socket path no longer leads to it, then shuts down cleanly.
    public static func run(_ configuration: DaemonConfiguration, logger: Logger) async throws {
        try ProcessHardening.apply()
        let daemon = try await start(configuration, logger: logger)
        daemon.stopRequest.listenForTerminationSignals()
        let reason = await daemon.stopRequest.wait()
        logger.info("shutting down", metadata: ["reason": "\(reason)"])
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

        let accessLog = AccessLog.standard(path: paths.accessLog, maxBytes: configuration.accessLogMaxBytes,
                                           clock: configuration.clock, logger: logger)
        let access = AccessControl(policy: policy, logger: logger, accessLog: accessLog)
        let activity = ActivityClock(clock: configuration.clock)
        let sessions = SessionManager(
            store: vault, transport: URLSessionTransport(), clock: configuration.clock,
            configuration: SessionManager.Configuration(
                minValid: TimeInterval(settings.sessionMinValidSeconds),
                refreshAhead: TimeInterval(settings.sessionProactiveRefreshSeconds),
                proactiveRefresh: settings.sessionProactiveRefreshSeconds > 0),
            logger: logger)
        await sessions.useOpenID(OIDCCacheVerifier(
            cache: OIDCProviderCache(fetcher: URLSessionDocumentFetcher(), clock: configuration.clock)))
        let service = VaultService(
            vault: vault, items: KeyringBackends.itemStore(for: settings, vault: vault, clock: configuration.clock),
            access: access, throttle: UnlockThrottle(clock: configuration.clock),
            activity: activity, settings: settings, keyFilePath: paths.keyFile, logger: logger,
            onUnlock: { Task { await resumeSessions(sessions, logger: logger) } })
        let sessionService = SessionService(sessions: sessions, access: access, activity: activity,
                                            clock: configuration.clock, logger: logger)
        var serverConfiguration = VarlinkServerConfiguration()
        serverConfiguration.idleTimeout = .seconds(settings.idleConnectionTimeoutSeconds)
        serverConfiguration.maxConnectionsPerUID = settings.maxConnectionsPerUID
        serverConfiguration.maxConnectionsPerProcess = settings.maxConnectionsPerProcess
        serverConfiguration.maxConnectionsPerExecutable = settings.maxConnectionsPerExecutable
        serverConfiguration.connectionsReservedForNewProcesses = settings.reservedConnectionsForNewProcesses
        serverConfiguration.admit = { peer in
            let admitted = access.admits(peer)
            if !admitted {
                accessLog?.recordRefusedConnection(peer)
                logger.notice("connection refused: no policy rule admits this peer",
                              metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "exe": "\(peer.executable ?? "?")"])
            }
            return admitted
        }
        let server = VarlinkServer(
            info: VarlinkServiceInfo(vendor: "sortedvault", product: "sortedvault", version: SortedVaultVersion.current,
                                     url: "https://github.com/sortedvault/sortedvault"),
            interfaces: [service, sessionService], configuration: serverConfiguration, logger: logger)
        // The identity of the socket file, to notice when the path stops leading here (SocketWatch).
        let socketIdentity: SocketIdentity?
        let watchStart = configuration.clock.now
        do {
            if let fd = configuration.inheritedListener {
                try await server.adopt(listeningDescriptor: fd)
                socketIdentity = nil
            } else {
                let fd = try ListeningSocket.bind(paths.socket)
                socketIdentity = SocketIdentity.of(paths.socket)
                do {
                    try await server.adopt(listeningDescriptor: fd)
                } catch {
                    ListeningSocket.remove(paths.socket, ifStill: socketIdentity)
                    throw error
                }
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
            "accessLog": "\(accessLog?.location ?? "none")",
        ])
        let sleeper = configuration.sleeper
        let autoLock = Task {
            await runAutoLock(vault: vault, activity: activity, minutes: settings.autoLockMinutes, sleeper: sleeper, logger: logger)
        }
        if !locked { await resumeSessions(sessions, logger: logger) }
        var background = [autoLock, Task { await SessionWorkLoop.run(sessions, clock: configuration.clock) }]
        let stopRequest = StopRequest()
        // A systemd socket is systemd's to manage; the watch covers a socket this daemon bound.
        if let socketIdentity {
            background.append(Task { [interval = configuration.socketCheckInterval] in
                guard let reason = await SocketWatch.run(path: paths.socket, identity: socketIdentity, interval: interval,
                                                         since: watchStart, clock: configuration.clock, sleeper: sleeper)
                else { return }
                logger.warning("\(reason): no client can reach this daemon any more, so it stops")
                stopRequest.request(reason)
            })
        }
        if let keyringUnlock {
            background.append(keyringUnlock)
            // The keyring may unlock the vault later, in the background: then resume the logins too.
            background.append(Task {
                await keyringUnlock.value
                if !(await vault.isLocked) { await resumeSessions(sessions, logger: logger) }
            })
        }
        return RunningDaemon(server: server, vault: vault, storage: storage, socketDirectory: socketDirectory,
                             socket: (paths.socket, socketIdentity), stopRequest: stopRequest, background: background, logger: logger)
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
    static func runAutoLock(vault: EncryptedVault, activity: ActivityClock, minutes: Int, sleeper: any Clock<Duration>,
                            logger: Logger) async {
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
            do {
                try await sleep(on: sleeper, for: .seconds(remaining))
            } catch {
                return
            }
        }
    }

    private static func sleep<C: Clock>(on clock: C, for duration: Duration) async throws where C.Duration == Duration {
        try await clock.sleep(for: duration)
    }
}

/// A daemon that is serving. Call ``shutdown()`` exactly once.
public final class RunningDaemon: Sendable {
    private let server: VarlinkServer
    private let vault: EncryptedVault
    private let storage: SQLiteSealedStorage
    private let socketDirectory: SocketDirectory
    private let socket: (path: String, identity: SocketIdentity?)
    private let background: [Task<Void, Never>]
    private let logger: Logger
    /// Fired by SIGTERM/SIGINT (once ``Daemon/run(_:logger:)`` listens) or by the socket watch.
    public let stopRequest: StopRequest

    init(server: VarlinkServer, vault: EncryptedVault, storage: SQLiteSealedStorage, socketDirectory: SocketDirectory,
         socket: (path: String, identity: SocketIdentity?), stopRequest: StopRequest, background: [Task<Void, Never>], logger: Logger) {
        self.server = server
        self.vault = vault
        self.storage = storage
        self.socketDirectory = socketDirectory
        self.socket = socket
        self.stopRequest = stopRequest
        self.background = background
        self.logger = logger
    }

    /// Stops serving, removes the socket (only while it is still this daemon's), zeroes the keys
    /// and closes the database.
    public func shutdown() async throws {
        background.forEach { $0.cancel() }
        try await server.shutdown()
        ListeningSocket.remove(socket.path, ifStill: socket.identity)
        await vault.lock()
        try storage.close()
        socketDirectory.release()
        logger.info("stopped")
    }
}
