import Logging
import Metrics
import Vault
import VaultCore
import VaultCrypto
import VaultPolicy

/// A fleet daemon's store (`backend = "postgresql"`), as the daemon uses it: the fleet's shared
/// ``TokenStore`` (items and logins), the key of the logs' service pseudonyms, and a close.
///
/// The daemon never names PostgreSQL: `sortedvault-fleet-daemon` passes a ``FleetOpener`` (VaultFleet's
/// `FleetStore.opener`) in ``DaemonConfiguration/openFleet``; `sortedvault-cli` passes none, so the
/// one-host daemon links no database client, and hands a fleet's settings to the fleet daemon.
public protocol FleetBacking: Sendable {
    /// Items and logins, with the fleet's leases, outbox and change hints found by cast
    /// (``LoginLeases``, ``RevocationOutbox``…).
    var store: any TokenStore { get }
    /// Derived from the fleet's key, so every daemon of the fleet writes the same pseudonym for the same service.
    var logNamesKey: SecureBytes { get }
    /// Stops the connection pool, after the services stopped.
    func close() async
}

/// What opening a fleet's store is given besides its settings.
public struct FleetOpening: Sendable {
    public let clock: any VaultClock
    /// What the database calls' deadlines sleep on (the daemon's ``DaemonConfiguration/sleeper``).
    public let deadlineClock: any Clock<Duration>
    public let metrics: any MetricsFactory
    public let logger: Logger
}

/// Opens the fleet's store, or throws a ``DaemonError`` that names what to fix.
public typealias FleetOpener = @Sendable (FleetDatabaseSettings, FleetOpening) async throws -> any FleetBacking

/// Thrown by ``Daemon/run(_:logger:)`` when the settings name a fleet database and this program has
/// no ``FleetOpener``: before any store is opened, and with the socket directory given back, so its
/// caller can run `sortedvault-fleet-daemon` in its place.
public struct FleetProgramNeeded: Error, Sendable {
    public static let program = "sortedvault-fleet-daemon"
    public init() {}
}

extension FleetDatabaseSettings {
    /// Where the database is, for the log and error text (no password, no key).
    public var place: String {
        switch endpoint {
        case let .unixSocket(directory): return "database \(database) over \(directory)"
        case let .tcp(host): return "database \(database) on \(host):\(port)"
        }
    }

    /// What a call that only a local vault has (lock, unlock, passphrase) answers on a fleet daemon.
    static func noLocalVault(_ operation: String) -> String {
        "this daemon serves a fleet's PostgreSQL store (backend = \"postgresql\" in settings.toml), which has no local vault to \(operation): its key is read from [postgresql] key_file at start-up"
    }
}
