import Testing
import VaultPolicy

/// `backend = "postgresql"` and its `[postgresql]` table: what a fleet daemon reads, and errors that
/// say what to write.
struct FleetSettingsTests {
    static let minimal = """
        backend = "postgresql"
        [postgresql]
        socket_directory = "/run/postgresql"
        database = "sortedvault"
        user = "sortedvault"
        key_file = "/etc/sortedvault/fleet.key"

        """

    @Test func theTableIsReadWithItsDefaults() throws {
        let settings = try DaemonSettings.parse(Self.minimal, file: "settings.toml")
        #expect(settings.backend == .postgresql)
        #expect(settings.postgresql == FleetDatabaseSettings(endpoint: .unixSocket(directory: "/run/postgresql"), port: 5432,
                                                             database: "sortedvault", user: "sortedvault",
                                                             keyFile: "/etc/sortedvault/fleet.key", callDeadlineSeconds: 10))
        #expect(DaemonSettings.builtInDefault.postgresql == nil)
    }

    @Test func everyKeyIsRead() throws {
        let settings = try DaemonSettings.parse("""
            backend = "postgresql"
            [postgresql]
            host = "db.internal"
            port = 6432
            database = "vault"
            user = "svc"
            password_file = "/etc/sortedvault/db-password"
            ca_file = "/etc/sortedvault/db-ca.pem"
            key_file = "/etc/sortedvault/fleet.key"
            call_deadline_seconds = 4
            """, file: "settings.toml")
        #expect(settings.postgresql == FleetDatabaseSettings(endpoint: .tcp(host: "db.internal"), port: 6432, database: "vault", user: "svc",
                                                             passwordFile: "/etc/sortedvault/db-password", caFile: "/etc/sortedvault/db-ca.pem",
                                                             keyFile: "/etc/sortedvault/fleet.key", callDeadlineSeconds: 4))
    }

    @Test(arguments: [
        ("backend = \"postgresql\"\n", 1, "backend = \"postgresql\" needs a [postgresql] table"),
        ("[postgresql]\nkey_file = \"/k\"\n", 1, "[postgresql] is set, but backend is \"embedded\"; write backend = \"postgresql\""),
        (minimal.replacingOccurrences(of: "backend = \"postgresql\"\n", with: "backend = \"postgresql\"\nauto_lock_minutes = 5\n"), 2,
         "has no local vault to lock; write auto_lock_minutes = 0"),
        (minimal.replacingOccurrences(of: "key_file = \"/etc/sortedvault/fleet.key\"\n", with: ""), 2,
         "[postgresql] (the table starting here) is missing the required key 'key_file'"),
        (minimal.replacingOccurrences(of: "socket_directory = \"/run/postgresql\"\n", with: ""), 2,
         "add socket_directory = \"/run/postgresql\" (this host) or host = \"db.internal\""),
        (minimal.replacingOccurrences(of: "[postgresql]\n", with: "[postgresql]\nhost = \"db\"\n"), 4, "has both host and socket_directory"),
        (minimal.replacingOccurrences(of: "\"/etc/sortedvault/fleet.key\"", with: "\"fleet.key\""), 6, "must be an absolute path"),
        (minimal.replacingOccurrences(of: "user = \"sortedvault\"\n", with: "user = \"sortedvault\"\npassword = \"x\"\n"), 6,
         "unknown key 'password' in [postgresql]; known keys: host, socket_directory, port, database, user, password_file"),
        (minimal + "call_deadline_seconds = 0\n", 7, "outside the allowed range 1…300"),
    ])
    func errors(text: String, line: Int, fragment: String) {
        let error = policyError { _ = try DaemonSettings.parse(text, file: "settings.toml") }
        #expect(error?.line == line, "\(String(describing: error))")
        #expect(error?.description.contains(fragment) == true, "\(String(describing: error))")
    }
}
