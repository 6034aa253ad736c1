import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import VaultCore

/// How a daemon reaches the fleet's PostgreSQL.
///
/// ```swift
/// var settings = PostgresSettings(endpoint: .unixSocket(directory: "/run/postgresql"), database: "sortedvault",
///                                 user: "sortedvault", passwordFile: "/etc/sortedvault/db-password")
/// let client = PostgresClient(configuration: try settings.clientConfiguration())
/// ```
///
/// The password comes from a file only — never argv or the environment, where other processes can
/// read it — and a file that others may read is refused. TLS, with the server's certificate and name
/// verified, is required for every TCP host, loopback addresses included; there is no setting to
/// turn it off. postgres-nio answers whatever authentication the server asks for, the cleartext
/// password included, and has no option to refuse one: only a verified server may ask. A loopback
/// address also needs `trustRootsFile`, since no public CA certifies one.
public struct PostgresSettings: Sendable, Equatable {
    public enum Endpoint: Sendable, Equatable {
        /// The directory holding PostgreSQL's socket (`.s.PGSQL.<port>`).
        case unixSocket(directory: String)
        /// A host name or address; always TLS.
        case tcp(host: String)
    }

    public var endpoint: Endpoint
    public var port: Int
    public var database: String
    public var user: String
    /// A file holding the password (one line), owned by this user and readable by nobody else.
    public var passwordFile: String?
    /// PEM file of the certificate authorities that sign the server's certificate; the system's when
    /// nil. Checked as ``TrustRootsFile`` says: owned by the daemon's user or root, writable by no one else.
    public var trustRootsFile: String?
    /// The server cancels a statement that runs longer (`statement_timeout`).
    public var statementTimeout: Duration
    /// The server gives up waiting for a row or table lock after this (`lock_timeout`).
    public var lockTimeout: Duration
    /// The server ends a session left idle inside a transaction (`idle_in_transaction_session_timeout`).
    public var idleInTransactionTimeout: Duration
    /// How long one call (a query or a whole transaction) may take on the daemon's clock before it is
    /// abandoned with an `unavailable` error.
    public var callDeadline: Duration

    /// The pool's ceiling per daemon: several daemons share one server's `max_connections`.
    public static let maximumConnections = 4

    public init(endpoint: Endpoint, port: Int = 5432, database: String, user: String, passwordFile: String? = nil,
                trustRootsFile: String? = nil, statementTimeout: Duration = .seconds(5), lockTimeout: Duration = .seconds(2),
                idleInTransactionTimeout: Duration = .seconds(10), callDeadline: Duration = .seconds(10)) {
        self.endpoint = endpoint
        self.port = port
        self.database = database
        self.user = user
        self.passwordFile = passwordFile
        self.trustRootsFile = trustRootsFile
        self.statementTimeout = statementTimeout
        self.lockTimeout = lockTimeout
        self.idleInTransactionTimeout = idleInTransactionTimeout
        self.callDeadline = callDeadline
    }

    /// postgres-nio's configuration for these settings: reads the password file, chooses TLS, caps the
    /// pool and sets the server-side timeouts of every connection in its start-up message.
    public func clientConfiguration() throws -> PostgresClient.Configuration {
        let password = try checkedPassword()
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case let .unixSocket(directory):
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        case let .tcp(host):
            configuration = .init(host: host, port: port, username: user, password: password, database: database,
                                  tls: .require(try verifiedTLS(host)))
        }
        configuration.options.maximumConnections = Self.maximumConnections
        configuration.options.connectTimeout = callDeadline
        configuration.options.additionalStartupParameters = startupParameters(applicationName: "sortedvault")
        return configuration
    }

    /// The one connection beside the pool that LISTENs for change hints: the same server, login, TLS
    /// and server-side timeouts, under the application name `sortedvault-listen`.
    public func listenConfiguration() throws -> PostgresConnection.Configuration {
        let password = try checkedPassword()
        var configuration: PostgresConnection.Configuration
        switch endpoint {
        case let .unixSocket(directory):
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        case let .tcp(host):
            let tls = PostgresConnection.Configuration.TLS.require(try NIOSSLContext(configuration: try verifiedTLS(host)))
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
        }
        configuration.options.connectTimeout = .nanoseconds(Int64(Self.milliseconds(callDeadline))! * 1_000_000)
        configuration.options.additionalStartupParameters = startupParameters(applicationName: "sortedvault-listen")
        return configuration
    }

    private func checkedPassword() throws -> String? {
        guard (1...65535).contains(port) else { throw VaultError.invalidArgument("the database port \(port) is not 1–65535") }
        guard !database.isEmpty, !user.isEmpty else {
            throw VaultError.invalidArgument("the database settings need a database and a user name")
        }
        return try passwordFile.map(PasswordFile.read)
    }

    /// TLS, certificate and host name verified, for every TCP host. Without it a process that binds
    /// the port (a loopback one too, while PostgreSQL restarts) could ask for the password in clear
    /// (`AuthenticationCleartextPassword`) or as an MD5 hash of its choosing, and postgres-nio would send it.
    private func verifiedTLS(_ host: String) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRootsFile {
            tls.trustRoots = .certificates(try TrustRootsFile.read(trustRootsFile))
        } else if Self.isLoopback(host) {
            throw VaultError.invalidArgument(
                "the database host \(host) is a loopback address reached over TCP, which needs TLS with the CA that signed the server's certificate ([postgresql] ca_file; no public CA certifies a loopback address); for PostgreSQL on this host use socket_directory instead")
        }
        return tls
    }

    private func startupParameters(applicationName: String) -> [(String, String)] {
        [
            ("application_name", applicationName),
            ("statement_timeout", Self.milliseconds(statementTimeout)),
            ("lock_timeout", Self.milliseconds(lockTimeout)),
            ("idle_in_transaction_session_timeout", Self.milliseconds(idleInTransactionTimeout)),
        ]
    }

    /// Only literal loopback addresses: a name such as `localhost` is resolved elsewhere and may not be.
    /// Such a host needs `trustRootsFile` (no public CA certifies one); every TCP host gets TLS.
    static func isLoopback(_ host: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) } == [UInt8](repeating: 0, count: 15) + [1]
        }
        return false
    }

    private static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

extension PostgresConnection.Configuration {
    /// Connects once, alone, and closes: whether the server is there, takes the TLS and the login.
    /// A pool only retries a connection that fails and keeps its reason to itself, so a daemon that
    /// cannot connect would say no more than "no answer"; this says which step failed and what to
    /// check (the certificate's names, its CA, the password). Bounded by `deadline` on `clock`.
    public func checkConnection(deadline: Duration, clock: any Clock<Duration> = ContinuousClock(), logger: Logger) async throws {
        let configuration = self
        try await DatabaseDeadline(clock: clock, limit: deadline).run {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
        }
    }
}
