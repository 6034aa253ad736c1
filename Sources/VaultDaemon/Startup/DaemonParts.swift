import FoundationEssentials
import Logging
import Metrics
import NIOPosix
import Prometheus
import ServiceLifecycle
import Varlink
import Vault
import VaultCore
import VaultOAuthHTTP
import VaultOIDC
import VaultPolicy
import VaultClient
import VaultSecretService
import VaultSQLite
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

/// Everything a daemon holds between start-up and shutdown: the open vault and database, the
/// socket directory's lock, the socket once bound, and the services that run on them. ``open(_:threadPool:logger:)``
/// does every check that can fail before anything is served; ``close()`` undoes it after the
/// services have stopped.
struct DaemonParts: Sendable {
    /// Where items and logins live: built once, in ``openStore(_:settings:threadPool:logger:)``, from `backend`.
    let backing: Backing
    let socketDirectory: SocketDirectory
    let socketPath: String
    /// The socket file this daemon bound; nil for a socket systemd passed (systemd's to remove).
    let bound: BoundSocket
    /// The services in start order, the socket server last (it is stopped first).
    let services: [any Service]
    /// Watches the socket path, for a socket this daemon bound.
    let socketWatch: SocketWatch?
    let accessLog: AccessLog?
    let logger: Logger

    enum Backing: Sendable {
        /// The local SQLite vault (backend "embedded" or "secret-service"), which this daemon owns.
        case local(LocalVault)
        /// The fleet's PostgreSQL (backend "postgresql"), shared with the fleet's other daemons.
        case fleet(any FleetBacking)

        /// The local vault; a fleet daemon has none (nothing to lock, unlock or initialise).
        var vault: EncryptedVault? {
            guard case .local(let local) = self else { return nil }
            return local.vault
        }

        /// Zeroes the keys, writes the newest generation record and closes the database (or the fleet's pool).
        func close(logger: Logger) async {
            switch self {
            case .local(let local):
                await local.vault.lock()
                await local.generationRecord.flush()
                do {
                    try local.storage.close()
                } catch {
                    logger.warning("the database did not close cleanly: \(error)")
                }
                local.owner.release()
            case .fleet(let fleet):
                await fleet.close()
            }
        }
    }

    struct LocalVault: Sendable {
        let vault: EncryptedVault
        let storage: SQLiteSealedStorage
        let generationRecord: BackgroundGenerationRecord
        let owner: VaultOwnerLock
    }

    /// Loads the policy, locks the socket directory, opens the store (the local vault, unlocked with
    /// a key file if it has one, or the fleet's database); builds the services (the socket server binds when it runs). Fails closed with an error that names the file.
    /// `threadPool`, started, is where the parts run their blocking work (Argon2id, libsecret, the
    /// generation record); the caller shuts it down after ``close()``.
    static func open(_ configuration: DaemonConfiguration, threadPool: NIOThreadPool, logger: Logger) async throws -> DaemonParts {
        let paths = configuration.paths
        let uid = geteuid()
        umask(0o077)  // everything the daemon creates is private to its user
        let (policy, settings) = try loadPolicy(paths, uid: uid)
        // The parts report to this daemon's own registry (not the process-wide MetricsSystem), which
        // the metrics endpoint serves; with no endpoint, to swift-metrics' no-op default.
        let registry = settings.metrics == nil ? nil : PrometheusCollectorRegistry()
        let metrics: any MetricsFactory = registry.map { PrometheusMetricsFactory(registry: $0) } ?? MetricsSystem.factory
        let (socketDirectory, backing) = try await takeSocketAndStore(configuration, settings: settings, metrics: metrics,
                                                                      threadPool: threadPool, logger: logger)
        let (items, logins, logNames) = stores(of: backing, settings: settings, clock: configuration.clock, threadPool: threadPool)
        KeyringBackends.checkItemKeyring(settings, threadPool: threadPool, logger: logger)
        let (accessLog, policySource, access) = accessControl(policy, configuration: configuration, uid: uid, names: logNames, logger: logger)
        let activity = ActivityClock(clock: configuration.clock)
        let sessions = try await sessionManager(settings, logins: logins, configuration: configuration, logNames: logNames,
                                                metrics: metrics, logger: logger)
        let vault = backing.vault
        let workLoop = Self.workLoop(sessions, vault: vault, configuration: configuration, logger: logger)
        let keyring = if let vault {
            await KeyringUnlock.ifConfigured(vault: vault, threadPool: threadPool, logger: logger, onUnlock: workLoop.vaultUnlocked)
        } else { nil as KeyringUnlock? }
        let service = VaultService(vault: vault, items: items, access: access, throttle: UnlockThrottle(clock: configuration.clock),
                                   activity: activity, settings: settings, keyFilePath: paths.keyFile,
                                   keyring: SecretServiceKeySource(threadPool: threadPool), clock: configuration.clock, threadPool: threadPool,
                                   sleeper: configuration.sleeper, logger: logger, onUnlock: workLoop.vaultUnlocked)
        let server = varlinkServer(service, sessions: sessions, access: access, activity: activity, settings: settings,
                                   configuration: configuration, accessLog: accessLog, logger: logger)
        let bound = BoundSocket()
        let watchStart = configuration.clock.now
        var services = backgroundServices(keyring: keyring, workLoop: workLoop, vault: vault, activity: activity, settings: settings,
                                          policySource: policySource, accessLog: accessLog, sleeper: configuration.sleeper, logger: logger)
        services.append(SocketServer(server: server, inheritedListener: configuration.inheritedListener, socketPath: paths.socket,
                                     bound: bound, keyring: keyring,
                                     announce: announcement(vault: vault, paths: paths, settings: settings, accessLog: accessLog, logger: logger),
                                     logger: logger))
        let watch = socketWatch(configuration, bound: bound, start: watchStart, logger: logger)
        // Last of start-up, so nothing after it can fail and leave it bound.
        if let endpoint = settings.metrics, let registry {
            do {
                services.insert(try await metricsServer(endpoint, registry: registry, sessions: sessions, clock: configuration.clock, logger: logger),
                                at: services.count - 1)
            } catch {
                await undo(accessLog, backing, socketDirectory, logger: logger)
                throw error
            }
        }
        return DaemonParts(backing: backing, socketDirectory: socketDirectory, socketPath: paths.socket,
                           bound: bound, services: services, socketWatch: watch, accessLog: accessLog, logger: logger)
    }

    /// Start-up ends twice over: when the server listens (``announcement``) and when the work loop
    /// has resumed the stored logins; whichever comes last unmaps start-up's code.
    private static func workLoop(_ sessions: SessionManager, vault: EncryptedVault?, configuration: DaemonConfiguration, logger: Logger) -> SessionWorkLoop {
        SessionWorkLoop(sessions: sessions, storeIsLocked: { await vault?.isLocked ?? false }, clock: configuration.clock,
                        sleeper: configuration.sleeper, logger: logger, startupDone: { MemoryTrim.releaseCodePages() })
    }

    /// A systemd socket is systemd's to manage; the watch covers a socket this daemon bound.
    private static func socketWatch(_ configuration: DaemonConfiguration, bound: BoundSocket, start: Date, logger: Logger) -> SocketWatch? {
        guard configuration.inheritedListener == nil else { return nil }
        return SocketWatch(path: configuration.paths.socket, bound: bound, interval: configuration.socketCheckInterval, start: start,
                           clock: configuration.clock, sleeper: configuration.sleeper, logger: logger)
    }

    /// The policy's checks, with the access log they write and the source that reloads the policy.
    private static func accessControl(_ policy: Policy, configuration: DaemonConfiguration, uid: uid_t, names: LogNames,
                                      logger: Logger) -> (AccessLog?, PolicySource, AccessControl) {
        let paths = configuration.paths
        let accessLog = AccessLog.standard(path: paths.accessLog, maxBytes: configuration.accessLogMaxBytes,
                                           clock: configuration.clock, names: names, logger: logger)
        let policySource = PolicySource(policy: policy, directory: paths.policyDirectory, daemonUID: uid)
        return (accessLog, policySource, AccessControl(policySource: policySource, logger: logger, names: names, accessLog: accessLog))
    }

    /// Gives back what start-up took, when its last step fails.
    private static func undo(_ accessLog: AccessLog?, _ backing: Backing, _ socketDirectory: SocketDirectory, logger: Logger) async {
        await accessLog?.close()
        await backing.close(logger: logger)
        socketDirectory.release()
    }

    /// Takes the socket directory and opens the store (the local vault, unlocked with a key file if
    /// it has one, or the fleet's database); the directory is given back if the store fails.
    private static func takeSocketAndStore(_ configuration: DaemonConfiguration, settings: DaemonSettings, metrics: any MetricsFactory,
                                           threadPool: NIOThreadPool, logger: Logger) async throws -> (SocketDirectory, Backing) {
        let paths = configuration.paths
        // Before the socket directory is taken, as a missing vault is the likelier mistake.
        if settings.postgresql == nil, !FileManager.default.fileExists(atPath: paths.database) {
            throw DaemonError("no vault at \(paths.database): run `sortedvault init` first (or set backend = \"postgresql\" for a fleet daemon, docs/fleet.md)")
        }
        let socketDirectory = try SocketDirectory(socketPath: paths.socket, keepSocket: configuration.inheritedListener != nil)
        do {
            return (socketDirectory, try await openStore(configuration, settings: settings, metrics: metrics, threadPool: threadPool, logger: logger))
        } catch {
            socketDirectory.release()
            throw error
        }
    }

    /// The socket's server: both interfaces, under the settings' connection limits.
    private static func varlinkServer(_ service: VaultService, sessions: SessionManager, access: AccessControl, activity: ActivityClock,
                                      settings: DaemonSettings, configuration: DaemonConfiguration, accessLog: AccessLog?,
                                      logger: Logger) -> VarlinkServer {
        let sessionService = SessionService(sessions: sessions, access: access, activity: activity,
                                            clock: configuration.clock, answerDeadline: AnswerDeadline(clock: configuration.answerClock),
                                            logger: logger)
        return VarlinkServer(
            info: VarlinkServiceInfo(vendor: "sortedvault", product: "sortedvault", version: SortedVaultVersion.current,
                                     url: "https://github.com/sortedvault/sortedvault"),
            interfaces: [service, sessionService], configuration: serverConfiguration(settings, access: access, accessLog: accessLog, logger: logger),
            logger: logger)
    }

    /// The services that run beside the socket server, in start order: the keyring's unlock, the
    /// session work loop, the auto-lock, memory trimming, policy reloads and access-log summaries.
    private static func backgroundServices(keyring: KeyringUnlock?, workLoop: SessionWorkLoop, vault: EncryptedVault?, activity: ActivityClock,
                                           settings: DaemonSettings, policySource: PolicySource, accessLog: AccessLog?,
                                           sleeper: any Clock<Duration>, logger: Logger) -> [any Service] {
        var services: [any Service] = keyring.map { [$0] } ?? []
        services.append(workLoop)
        if let vault, settings.autoLockMinutes > 0 {
            services.append(AutoLock(vault: vault, activity: activity, minutes: settings.autoLockMinutes, sleeper: sleeper, logger: logger))
        }
        services.append(MemoryTrim(activity: activity, sleeper: sleeper))
        services.append(PolicyReloadOnHangup(source: policySource, logger: logger))
        if let accessLog { services.append(AccessLogSummaries(log: accessLog, sleeper: sleeper)) }
        return services
    }

    /// The policy and settings in `paths`' policy directory, or the built-in ones without it; a
    /// file that does not parse stops start-up with the error that names it.
    private static func loadPolicy(_ paths: VaultPaths, uid: uid_t) throws -> (Policy, DaemonSettings) {
        do {
            guard let directory = paths.policyDirectory else {
                return (Policy.builtInDefault(daemonUID: uid), DaemonSettings.builtInDefault)
            }
            return (try Policy.load(directory: directory, daemonUID: uid), try DaemonSettings.load(directory: directory, daemonUID: uid))
        } catch let error as PolicyError {
            throw DaemonError("refusing to start: \(error)")
        }
    }

    /// Where item calls go, where the logins live, and how the logs name a service, for `backing`.
    private static func stores(of backing: Backing, settings: DaemonSettings, clock: any VaultClock,
                               threadPool: NIOThreadPool) -> (items: any TokenStore, logins: any TokenStore, logNames: LogNames) {
        switch backing {
        case .local(let local):
            return (KeyringBackends.itemStore(for: settings, vault: local.vault, clock: clock, threadPool: threadPool),
                    local.vault, LogNames(mode: settings.accessLogNames, vault: local.vault))
        case .fleet(let fleet):
            return (fleet.store, fleet.store, LogNames(mode: settings.accessLogNames, keySource: { fleet.logNamesKey }))
        }
    }

    /// The one session manager, on `logins`, with the settings' refresh timing and an OpenID verifier.
    private static func sessionManager(_ settings: DaemonSettings, logins: any TokenStore, configuration: DaemonConfiguration,
                                       logNames: LogNames, metrics: any MetricsFactory, logger: Logger) async throws -> SessionManager {
        let providerDeadline = settings.sessionProviderDeadlineSeconds.map(TimeInterval.init) ?? HTTPClientTransport.defaultTimeout
        let sessions = try SessionManager(
            store: logins, transport: HTTPClientTransport(timeout: providerDeadline), clock: configuration.clock,
            configuration: SessionManager.Configuration(
                minValid: TimeInterval(settings.sessionMinValidSeconds),
                refreshAhead: TimeInterval(settings.sessionProactiveRefreshSeconds),
                proactiveRefresh: settings.sessionProactiveRefreshSeconds > 0,
                refreshLease: max(SessionManager.Configuration().refreshLease, 2 * providerDeadline),
                deviceFlow: settings.sessionDeviceFlow),
            logger: logger, logName: { logNames.field($0) }, metrics: metrics)
        sessions.useOpenID(OIDCCacheVerifier(
            cache: OIDCProviderCache(fetcher: HTTPDocumentFetcher(), clock: configuration.clock)))
        return sessions
    }

    /// What the socket server runs once it listens: the "serving" line, then start-up's end.
    private static func announcement(vault: EncryptedVault?, paths: VaultPaths, settings: DaemonSettings, accessLog: AccessLog?,
                                     logger: Logger) -> @Sendable () async -> Void {
        {
            let locked = await vault?.isLocked ?? false
            logger.info("serving", metadata: [
                "socket": "\(paths.socket)", "database": "\(settings.postgresql?.place ?? paths.database)",
                "locked": "\(locked)", "autoLockMinutes": "\(settings.autoLockMinutes)",
                "backend": "\(settings.backend.rawValue)", "accessLog": "\(accessLog?.location ?? "none")",
            ])
            // Start-up's code (argument parsing, policy and database set-up, the conformance scan)
            // is not needed again: unmap it, so resident memory is what serving uses (MemoryTrim).
            // The header's key sources are decoded here once (Status reuses them while the header's
            // bytes are unchanged), so no call after start-up runs the header's decoder.
            _ = try? vault?.keySourceKindsNow()
            MemoryTrim.releaseCodePages()
        }
    }

    /// The operators' metrics endpoint (`[metrics] listen`), bound; the store's figures are read
    /// before a scrape when they are stale.
    private static func metricsServer(_ endpoint: MetricsEndpoint, registry: PrometheusCollectorRegistry, sessions: SessionManager,
                                      clock: any VaultClock, logger: Logger) async throws -> MetricsServer {
        let figures = StoreFigureCache(clock: clock) { await sessions.recordStoreMetrics() }
        return try await MetricsServer.bind(endpoint, registry: registry, beforeScrape: { await figures.refreshIfStale() }, logger: logger)
    }

    /// The one place the store is chosen: the fleet's database for `backend = "postgresql"` (or
    /// ``FleetProgramNeeded`` in a program without a ``FleetOpener``), else the local vault, opened
    /// and (with a key file) unlocked. Fails closed with an error that names the file.
    private static func openStore(_ configuration: DaemonConfiguration, settings: DaemonSettings, metrics: any MetricsFactory,
                                  threadPool: NIOThreadPool, logger: Logger) async throws -> Backing {
        if let fleet = settings.postgresql {
            guard let openFleet = configuration.openFleet else { throw FleetProgramNeeded() }
            return .fleet(try await openFleet(fleet, FleetOpening(clock: configuration.clock, deadlineClock: configuration.sleeper,
                                                                  metrics: metrics, logger: logger)))
        }
        let paths = configuration.paths
        let owner: VaultOwnerLock
        do {
            owner = try VaultOwnerLock(database: paths.database, exclusive: false)
        } catch let error as VaultError {
            throw DaemonError("refusing to start: \(error.reason)")
        }
        let storage: SQLiteSealedStorage
        let vault: EncryptedVault
        // Written after each acknowledged change, off the caller's thread (the event loop): a store
        // waits for its commit, not for the record's fsyncs. Flushed in close(), before the pool stops.
        let generationRecord = BackgroundGenerationRecord(GenerationFile(path: paths.generationRecord), threadPool: threadPool)
        do {
            storage = try SQLiteSealedStorage(path: paths.database)
            vault = try await EncryptedVault(storage: storage, threadPool: threadPool, clock: configuration.clock,
                                           generationRecord: generationRecord)
            if try await vault.keySourceKinds().contains("keyfile") {
                do {
                    try await vault.unlock(.keyFile(try KeyFile.load(from: paths.keyFile)))
                } catch let error as VaultError {
                    throw DaemonError("the vault is protected by a key file, but it did not unlock: \(error.reason)")
                }
            }
        } catch {
            owner.release()
            throw error
        }
        return .local(LocalVault(vault: vault, storage: storage, generationRecord: generationRecord, owner: owner))
    }

    /// After the services stopped: removes the socket (only while it is still this daemon's),
    /// zeroes the keys, writes the newest generation record, closes the database and releases the
    /// socket directory.
    func close() async {
        ListeningSocket.remove(socketPath, ifStill: bound.current)
        accessLog?.flushSummaries()
        await accessLog?.close()
        await backing.close(logger: logger)
        socketDirectory.release()
        logger.info("stopped")
    }

    private static func serverConfiguration(_ settings: DaemonSettings, access: AccessControl, accessLog: AccessLog?,
                                            logger: Logger) -> VarlinkServerConfiguration {
        var configuration = VarlinkServerConfiguration()
        configuration.idleTimeout = .seconds(settings.idleConnectionTimeoutSeconds)
        configuration.maxConnectionsPerUID = settings.maxConnectionsPerUID
        configuration.maxConnectionsPerProcess = settings.maxConnectionsPerProcess
        configuration.maxConnectionsPerExecutable = settings.maxConnectionsPerExecutable
        configuration.connectionsReservedForNewProcesses = settings.reservedConnectionsForNewProcesses
        // Only a rule that names groups needs a peer's supplementary groups: no /proc read otherwise.
        configuration.readsGroups = { access.policy.namesGroups }
        configuration.admit = { peer in
            let admitted = access.admits(peer)
            if !admitted {
                accessLog?.recordRefusedConnection(peer)
                logger.notice("connection refused: no policy rule admits this peer",
                              metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "exe": "\(peer.executable ?? "?")"])
            }
            return admitted
        }
        return configuration
    }
}
