/// The daemon's user-tunable settings, from `settings.toml` in the policy directory.
///
/// ```swift
/// let settings = try DaemonSettings.load(directory: "/etc/sortedvault/policy", daemonUID: getuid())
/// ```
///
/// Every key is optional (an absent key keeps its built-in default); unknown keys and values
/// out of range are errors naming the file and line.
public struct DaemonSettings: Sendable, Equatable {
    /// Lock after this many idle minutes; 0 = never. 0…10080 (a week).
    public var autoLockMinutes: Int
    /// Close a client connection idle this long. 1…3600.
    public var idleConnectionTimeoutSeconds: Int
    /// Refuse further connections from one uid beyond this many. 1…4096.
    public var maxConnectionsPerUID: Int
    /// Refuse further connections from one process beyond this many. 1…4096.
    public var maxConnectionsPerProcess: Int
    /// Refuse further connections from the processes of one executable (per uid) beyond this many. 1…4096.
    public var maxConnectionsPerExecutable: Int
    /// The last of a uid's connections that only a process holding none yet may open, so one app
    /// cannot lock the others out; nil = an eighth of ``maxConnectionsPerUID``. 0…4096, and
    /// always less than ``maxConnectionsPerUID``.
    public var reservedConnectionsForNewProcesses: Int?
    /// Auto-login returns a cached access token only if it stays valid this long. 0…86400.
    public var sessionMinValidSeconds: Int
    /// The daemon refreshes stored logins this long before `sessionMinValidSeconds` would be
    /// crossed (plus up to 30 s of jitter); 0 = only when a client asks. 0…86400.
    public var sessionProactiveRefreshSeconds: Int
    /// Whether `session login --flow device` (RFC 8628) may run: off for users who fear its
    /// phishing risk (someone talks them into entering a code at the provider).
    public var sessionDeviceFlow = true
    /// The most one request to a provider may take in all, in seconds; nil = the transport's own
    /// (15 s). The refresh lease is made at least twice as long. 1…300.
    public var sessionProviderDeadlineSeconds: Int?
    /// Where items live: sortedvault's embedded encrypted store (the default), the desktop keyring,
    /// or a fleet's PostgreSQL (items and logins both, shared with the fleet's other daemons).
    public var backend: ItemBackend
    /// The `[postgresql]` table: set exactly when ``backend`` is `.postgresql`.
    public var postgresql: FleetDatabaseSettings?
    /// How the access log and the daemon's log name a service: a keyed pseudonym (the default: the
    /// logs are at rest in plaintext, the vault's names are not) or the plain name.
    public var accessLogNames: LogNames = .pseudonyms
    /// The `[metrics]` table: where Prometheus scrapes the daemon's metrics; nil (the default) serves none.
    public var metrics: MetricsEndpoint?

    /// `access_log_names = "pseudonyms"` or `"plain"`.
    public enum LogNames: String, Sendable, Equatable, CaseIterable {
        case pseudonyms
        case plain
    }

    /// `backend = "embedded"`, `backend = "secret-service"` or `backend = "postgresql"`.
    public enum ItemBackend: String, Sendable, Equatable, CaseIterable {
        case embedded
        case secretService = "secret-service"
        case postgresql
    }

    public init(autoLockMinutes: Int, idleConnectionTimeoutSeconds: Int, maxConnectionsPerUID: Int, sessionMinValidSeconds: Int,
                sessionProactiveRefreshSeconds: Int = 60, backend: ItemBackend = .embedded,
                maxConnectionsPerProcess: Int = 32, maxConnectionsPerExecutable: Int = 56, reservedConnectionsForNewProcesses: Int? = nil) {
        self.autoLockMinutes = autoLockMinutes
        self.idleConnectionTimeoutSeconds = idleConnectionTimeoutSeconds
        self.maxConnectionsPerUID = maxConnectionsPerUID
        self.maxConnectionsPerProcess = maxConnectionsPerProcess
        self.maxConnectionsPerExecutable = maxConnectionsPerExecutable
        self.reservedConnectionsForNewProcesses = reservedConnectionsForNewProcesses
        self.sessionMinValidSeconds = sessionMinValidSeconds
        self.sessionProactiveRefreshSeconds = sessionProactiveRefreshSeconds
        self.backend = backend
    }

    static let autoLockRange = 0...10080
    static let idleTimeoutRange = 1...3600
    static let connectionsRange = 1...4096
    static let reserveRange = 0...4096
    static let minValidRange = 0...86400
    static let proactiveRefreshRange = 0...86400
    static let providerDeadlineRange = 1...300

    /// What an absent key means. Equal to the shipped `settings.toml` (a test checks), but kept
    /// apart so parsing that file does not depend on its own result.
    static let keyDefaults = DaemonSettings(autoLockMinutes: 0, idleConnectionTimeoutSeconds: 60, maxConnectionsPerUID: 64, sessionMinValidSeconds: 60,
                                                sessionProactiveRefreshSeconds: 60)

    /// The settings of the shipped `policy/settings.toml`.
    public static let builtInDefault: DaemonSettings = {
        do {
            return try parse(BuiltInFiles.settings, file: BuiltInFiles.settingsName)
        } catch {
            preconditionFailure("the built-in settings do not parse: \(error)")
        }
    }()

    /// Parses settings text; absent keys keep the built-in defaults.
    public static func parse(_ text: String, file: String) throws -> DaemonSettings {
        let reader = TOMLTableReader(table: try TOMLParser.parse(text, file: file), file: file, name: "the top level")
        try reader.rejectUnknownKeys(["auto_lock_minutes", "idle_connection_timeout_seconds", "max_connections_per_uid",
                                      "max_connections_per_process", "max_connections_per_executable",
                                      "reserved_connections_for_new_processes", "backend", "access_log_names", "session", "postgresql", "metrics"])
        var settings = keyDefaults
        if let value = try reader.integer("auto_lock_minutes", in: autoLockRange) { settings.autoLockMinutes = value }
        if let value = try reader.integer("idle_connection_timeout_seconds", in: idleTimeoutRange) { settings.idleConnectionTimeoutSeconds = value }
        if let value = try reader.integer("max_connections_per_uid", in: connectionsRange) { settings.maxConnectionsPerUID = value }
        if let value = try reader.integer("max_connections_per_process", in: connectionsRange) { settings.maxConnectionsPerProcess = value }
        if let value = try reader.integer("max_connections_per_executable", in: connectionsRange) { settings.maxConnectionsPerExecutable = value }
        if let value = try reader.integer("reserved_connections_for_new_processes", in: reserveRange) {
            guard value < settings.maxConnectionsPerUID else {
                throw reader.invalid("reserved_connections_for_new_processes",
                                     "reserved_connections_for_new_processes (\(value)) must be less than max_connections_per_uid (\(settings.maxConnectionsPerUID)): the rest are the slots every process may use")
            }
            settings.reservedConnectionsForNewProcesses = value
        }
        if let value = try reader.value("backend") {
            let text = try reader.string("backend", value, example: "\"embedded\"")
            guard let backend = ItemBackend(rawValue: text) else {
                throw reader.invalid("backend", "backend \(text.debugDescription) is not known; write backend = \"embedded\", backend = \"secret-service\" or backend = \"postgresql\"")
            }
            settings.backend = backend
        }
        if let value = try reader.value("access_log_names") {
            let text = try reader.string("access_log_names", value, example: "\"pseudonyms\"")
            guard let names = LogNames(rawValue: text) else {
                throw reader.invalid("access_log_names", "access_log_names \(text.debugDescription) is not known; write access_log_names = \"pseudonyms\" or access_log_names = \"plain\"")
            }
            settings.accessLogNames = names
        }
        if let session = try reader.subtable("session") {
            try session.rejectUnknownKeys(["min_valid_seconds", "proactive_refresh_seconds", "device_flow", "provider_deadline_seconds"])
            if let value = try session.boolean("device_flow") { settings.sessionDeviceFlow = value }
            if let value = try session.integer("min_valid_seconds", in: minValidRange) { settings.sessionMinValidSeconds = value }
            if let value = try session.integer("proactive_refresh_seconds", in: proactiveRefreshRange) {
                settings.sessionProactiveRefreshSeconds = value
            }
            settings.sessionProviderDeadlineSeconds = try session.integer("provider_deadline_seconds", in: providerDeadlineRange)
        }
        try parseFleet(reader, into: &settings)
        try parseMetrics(reader, into: &settings)
        return settings
    }

    /// `[postgresql]` goes with `backend = "postgresql"` and nothing else; a fleet daemon has no
    /// local vault, so it has nothing to lock after idle minutes.
    private static func parseFleet(_ reader: TOMLTableReader, into settings: inout DaemonSettings) throws {
        let table = try reader.subtable("postgresql")
        guard settings.backend == .postgresql else {
            if table != nil {
                throw reader.invalid("postgresql", "[postgresql] is set, but backend is \"\(settings.backend.rawValue)\"; write backend = \"postgresql\" to use it, or remove the table")
            }
            return
        }
        guard let table else {
            throw reader.invalid("backend", "backend = \"postgresql\" needs a [postgresql] table saying where the database is and which key file opens the fleet's keys; see docs/fleet.md (Deployment)")
        }
        if settings.autoLockMinutes > 0 {
            throw reader.invalid("auto_lock_minutes", "auto_lock_minutes is \(settings.autoLockMinutes), but a daemon with backend = \"postgresql\" has no local vault to lock; write auto_lock_minutes = 0 or remove it")
        }
        settings.postgresql = try FleetDatabaseSettings.parse(table)
    }

    /// Reads `settings.toml` from `directory` with the same safety checks as
    /// ``Policy/load(directory:daemonUID:)``; a missing file gives ``builtInDefault``.
    public static func load(directory: String, daemonUID: UInt32) throws -> DaemonSettings {
        let dir = try PolicyDirectory(path: directory, daemonUID: daemonUID)
        guard let text = try dir.text(of: Policy.settingsFileName) else { return builtInDefault }
        return try parse(text, file: dir.filePath(Policy.settingsFileName))
    }
}
