/// The `[postgresql]` table of `settings.toml`: how a fleet daemon (`backend = "postgresql"`) reaches
/// the fleet's database, and the key file that opens the fleet's keys (docs/fleet.md).
///
/// ```toml
/// backend = "postgresql"
/// [postgresql]
/// socket_directory = "/run/postgresql"      # or host = "db.internal" (always over TLS)
/// database = "sortedvault"
/// user = "sortedvault"
/// password_file = "/etc/sortedvault/db-password"
/// key_file = "/etc/sortedvault/fleet.key"   # the same 32-byte file on every host of the fleet
/// ```
///
/// Paths only: the password and the key are read from their files when the daemon starts, never from
/// this file, argv or the environment.
public struct FleetDatabaseSettings: Sendable, Equatable {
    public enum Endpoint: Sendable, Equatable {
        case unixSocket(directory: String)
        case tcp(host: String)
    }

    public var endpoint: Endpoint
    public var port = 5432
    public var database: String
    public var user: String
    public var passwordFile: String?
    /// PEM certificate authorities for the server's certificate (`ca_file`); the system's when nil.
    /// Needed for a loopback `host`. Refused at start-up unless owned by the daemon's user or root
    /// and writable by no one else: whoever can write it chooses the server the daemon trusts.
    public var caFile: String?
    /// The fleet's master key: a sortedvault key file (32 bytes, mode 0600 or 0400, owned by the daemon's user).
    public var keyFile: String
    /// How long one database call may take before the caller gets `unavailable` (`call_deadline_seconds`).
    public var callDeadlineSeconds = 10

    public init(endpoint: Endpoint, port: Int = 5432, database: String, user: String, passwordFile: String? = nil,
                caFile: String? = nil, keyFile: String, callDeadlineSeconds: Int = 10) {
        self.endpoint = endpoint
        self.port = port
        self.database = database
        self.user = user
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.keyFile = keyFile
        self.callDeadlineSeconds = callDeadlineSeconds
    }

    static let portRange = 1...65535
    static let callDeadlineRange = 1...300
    static let keys = ["host", "socket_directory", "port", "database", "user", "password_file", "ca_file", "key_file",
                       "call_deadline_seconds"]

    static func parse(_ table: TOMLTableReader) throws -> FleetDatabaseSettings {
        try table.rejectUnknownKeys(keys)
        func text(_ key: String, example: String, required: Bool = false) throws -> String? {
            guard let value = required ? try table.required(key, example: example) : try table.value(key) else { return nil }
            let text = try table.string(key, value, example: example)
            guard !text.isEmpty else { throw table.invalid(key, "'\(key)' in [postgresql] is empty; write for example \(key) = \(example)") }
            return text
        }
        func path(_ key: String, example: String, required: Bool = false) throws -> String? {
            guard let path = try text(key, example: example, required: required) else { return nil }
            guard path.hasPrefix("/") else {
                throw table.invalid(key, "'\(key)' in [postgresql] must be an absolute path, such as \(key) = \(example)")
            }
            return path
        }
        let host = try text("host", example: "\"db.internal\"")
        let directory = try path("socket_directory", example: "\"/run/postgresql\"")
        let endpoint: Endpoint
        switch (host, directory) {
        case let (host?, nil): endpoint = .tcp(host: host)
        case let (nil, directory?): endpoint = .unixSocket(directory: directory)
        case (.some, .some):
            throw table.invalid("socket_directory", "[postgresql] has both host and socket_directory; keep one: socket_directory for PostgreSQL on this host, host for one reached over TCP (always with TLS)")
        case (nil, nil):
            throw PolicyError(.missingKey, file: table.file, line: table.table.line == 0 ? nil : table.table.line,
                              "[postgresql] says neither where PostgreSQL listens; add socket_directory = \"/run/postgresql\" (this host) or host = \"db.internal\" (TCP, always with TLS)")
        }
        // `required` throws for a missing key, so these are never nil.
        let database = try text("database", example: "\"sortedvault\"", required: true)!
        let user = try text("user", example: "\"sortedvault\"", required: true)!
        let keyFile = try path("key_file", example: "\"/etc/sortedvault/fleet.key\" (the fleet's key file, the same on every host)",
                               required: true)!
        var settings = FleetDatabaseSettings(endpoint: endpoint, database: database, user: user,
                                             passwordFile: try path("password_file", example: "\"/etc/sortedvault/db-password\""),
                                             caFile: try path("ca_file", example: "\"/etc/sortedvault/db-ca.pem\""), keyFile: keyFile)
        if let port = try table.integer("port", in: portRange) { settings.port = port }
        if let seconds = try table.integer("call_deadline_seconds", in: callDeadlineRange) { settings.callDeadlineSeconds = seconds }
        return settings
    }
}
