import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import Metrics
import PostgresNIO
import Vault
import VaultCore
import VaultCrypto
import VaultDaemon
import VaultPolicy
import VaultPostgres

/// A fleet daemon's store (`backend = "postgresql"`): the fleet's PostgreSQL, opened with the fleet's
/// key file, its connection pool running for as long as the daemon does (docs/fleet.md).
///
/// ```swift
/// var configuration = DaemonConfiguration(paths: paths)
/// configuration.openFleet = FleetStore.opener   // what sortedvault-fleet-daemon runs with
/// ```
///
/// There is no local vault: nothing to initialise, lock or unlock, no key slots and no generation
/// record. Every host of the fleet reads the same key file; the database sees only what it wraps.
public struct FleetStore: FleetBacking {
    let postgres: PostgresTokenStore
    public var store: any TokenStore { postgres }
    /// The key of the logs' service pseudonyms, derived from the fleet's key, so every daemon of the
    /// fleet writes the same pseudonym for the same service.
    public let logNamesKey: SecureBytes
    /// The connection pool (at most 4) and the one connection beside it that listens for change hints.
    private let pool: Task<Void, Never>
    private let listener: Task<Void, Never>

    /// The daemon's ``FleetOpener``.
    public static let opener: FleetOpener = { settings, opening in
        try await open(settings, clock: opening.clock, deadlineClock: opening.deadlineClock, metrics: opening.metrics,
                       logger: opening.logger)
    }

    static func open(_ settings: FleetDatabaseSettings, clock: any VaultClock, deadlineClock: any Clock<Duration>,
                     metrics: any MetricsFactory, logger: Logger) async throws -> FleetStore {
        let master: SecureBytes
        do {
            master = try KeyFile.load(from: settings.keyFile)
        } catch let error as VaultError {
            throw DaemonError("refusing to start: the fleet's key file ([postgresql] key_file): \(error.reason). A fleet daemon needs no `sortedvault init`; it needs the fleet's key file, the same on every host: create it once with `(umask 077; head -c 32 /dev/urandom > \(settings.keyFile))` and copy it to each host, owned by the daemon's user, mode 0600")
        }
        let configuration: PostgresClient.Configuration, listenConfiguration: PostgresConnection.Configuration
        do {
            configuration = try postgresSettings(settings).clientConfiguration()
            listenConfiguration = try postgresSettings(settings).listenConfiguration()
        } catch let error as VaultError {
            throw DaemonError("refusing to start: the [postgresql] settings: \(error.reason)")
        }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let pool = Task { await client.run() }
        do {
            let store = try await PostgresTokenStore.open(
                client: client, masterKey: master, clock: clock, callDeadline: .seconds(settings.callDeadlineSeconds),
                deadlineClock: deadlineClock, logger: logger, metrics: metrics)
            let logNamesKey = SecureBytes(copying: KeyedHash.tag(key: master, context: "sortedvault fleet log names", parts: []))
            let listener = Task { await store.listenForChanges(listenConfiguration) }
            return FleetStore(postgres: store, logNamesKey: logNamesKey, pool: pool, listener: listener)
        } catch let error as VaultError {
            pool.cancel()
            var reason = error.reason
            if error.code == .wrongPassphrase {
                reason += "; every host of a fleet needs the same key file as the daemon that first opened the database"
            } else if error.code == .unavailable {
                // The pool keeps why its connections fail to itself: one connection made alone says
                // which step failed (no server, TLS, the login), when that is the reason.
                do {
                    try await listenConfiguration.checkConnection(deadline: .seconds(settings.callDeadlineSeconds),
                                                                  clock: deadlineClock, logger: logger)
                } catch let connecting as VaultError {
                    if connecting.reason != error.reason { reason = "cannot connect: \(connecting.reason)" }
                } catch {}
            }
            throw DaemonError("refusing to start: the fleet's database (\(settings.place)) did not open: \(reason)")
        } catch {
            pool.cancel()
            throw error
        }
    }

    /// Stops the connection pool, after the services stopped.
    public func close() async {
        listener.cancel()
        await listener.value
        pool.cancel()
        await pool.value
    }

    static func postgresSettings(_ settings: FleetDatabaseSettings) -> PostgresSettings {
        let endpoint: PostgresSettings.Endpoint
        switch settings.endpoint {
        case let .unixSocket(directory): endpoint = .unixSocket(directory: directory)
        case let .tcp(host): endpoint = .tcp(host: host)
        }
        return PostgresSettings(endpoint: endpoint, port: settings.port, database: settings.database, user: settings.user,
                                passwordFile: settings.passwordFile, trustRootsFile: settings.caFile,
                                callDeadline: .seconds(settings.callDeadlineSeconds))
    }
}
