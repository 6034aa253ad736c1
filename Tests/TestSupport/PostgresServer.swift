import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL for one test run: `initdb` into a fresh directory under /tmp, listening on a Unix
/// socket only, stopped and removed by ``stop()``.
///
/// ```swift
/// let server = try PostgresServer.start()
/// defer { server.stop() }
/// let database = try server.createDatabase()   // owned by `server.user`, whose password is in `server.passwordFile`
/// ```
///
/// PostgreSQL refuses to run as root, so under root the server runs as `nobody` (its directory is
/// chowned to it) and the test process reaches the socket as root. Never put the data directory in
/// the repository: CI checks it out inside a directory `nobody` cannot enter.
public final class PostgresServer: Sendable {
    /// A TCP listener with TLS beside the Unix socket, the server run inside a network namespace.
    public struct TCPListener: Sendable {
        /// The namespace the server runs in (`ip netns exec`); its address is on a link into it.
        public var namespace: String
        public var address: String
        /// PEM files the server reads (as `nobody` under root): its certificate and its private key (mode 0600).
        public var certificateFile: String
        public var keyFile: String

        public init(namespace: String, address: String, certificateFile: String, keyFile: String) {
            self.namespace = namespace
            self.address = address
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }

    /// The temporary directory holding everything: data, socket, log, password file.
    public let root: String
    public let socketDirectory: String
    public let port = 5432
    /// The role the tests connect as: a password login (scram-sha-256), owner of the databases it creates.
    public let user = "fleet"
    /// The role's password, one line, mode 0600, owned by the test process's user.
    public let passwordFile: String

    public let listener: TCPListener?
    private let binaries: String
    private var dataDirectory: String { root + "/data" }
    private var logFile: String { root + "/server.log" }
    private var runsAsNobody: Bool { geteuid() == 0 }

    private init(root: String, binaries: String, listener: TCPListener?) {
        self.root = root
        self.listener = listener
        self.binaries = binaries
        socketDirectory = root + "/socket"
        passwordFile = root + "/fleet-password"
    }

    /// Creates a cluster, starts it and creates the `fleet` role; with `listener`, it also takes
    /// TLS connections (`hostssl`, scram) on that address, run inside that namespace.
    public static func start(listener: TCPListener? = nil) throws -> PostgresServer {
        var template = Array("/tmp/sv-postgres-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("mkdtemp under /tmp failed: \(String(cString: strerror(errno)))") }
        let server = PostgresServer(root: String(cString: made), binaries: try findBinaries(), listener: listener)
        do {
            try server.setUp()
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    private func setUp() throws {
        chmod(root, 0o755)
        mkdir(socketDirectory, 0o755)
        if runsAsNobody {
            let nobody = getpwnam("nobody")!.pointee
            for path in [root, socketDirectory] { chown(path, nobody.pw_uid, nobody.pw_gid) }
        }
        try runAsServerUser([binaries + "/initdb", "-D", dataDirectory, "--auth-local=peer", "--auth-host=reject",
                             "--encoding=UTF8", "--locale=C", "--no-sync"], what: "initdb")
        // The server's own user administers it over peer authentication; every other role logs in
        // with a password, as a fleet's daemons do.
        let serverUser = runsAsNobody ? "nobody" : String(cString: getpwuid(geteuid())!.pointee.pw_name)
        let tcp = listener.map { "hostssl all all \($0.address)/24 scram-sha-256\n" } ?? ""
        try "local all \(serverUser) peer\nlocal all all scram-sha-256\n\(tcp)".write(toFile: dataDirectory + "/pg_hba.conf", atomically: false, encoding: .utf8)
        try startUp()
        let password = (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try writePrivateFile(passwordFile, password + "\n")
        try psql("CREATE ROLE \(user) LOGIN PASSWORD '\(password)';")
    }

    /// Starts the stopped server again (`pg_ctl start -w`).
    public func startUp() throws {
        try runAsServerUser([binaries + "/pg_ctl", "-D", dataDirectory, "-l", logFile, "-w", "-t", "60",
                             "-o", serverOptions, "start"], what: "pg_ctl start")
    }

    /// Stops the server, keeping its data (`pg_ctl stop -m fast`): connections are cut, as in an outage.
    public func shutDown() throws {
        try runAsServerUser([binaries + "/pg_ctl", "-D", dataDirectory, "-m", "fast", "-w", "-t", "60", "stop"], what: "pg_ctl stop")
    }

    /// Restarts the server (`pg_ctl restart -m fast`).
    public func restart() throws {
        try runAsServerUser([binaries + "/pg_ctl", "-D", dataDirectory, "-l", logFile, "-m", "fast", "-w", "-t", "60",
                             "-o", serverOptions, "restart"], what: "pg_ctl restart")
    }

    /// Room for every connection the tests sharing one server can open at once. Swift Testing runs
    /// PostgresSuite's cases side by side, unserialized: each store's pool opens up to
    /// `PostgresSettings.maximumConnections` (4) plus one listening connection, each fleet daemon the
    /// same, each `sql` call one more. Counted from the code, all of the suite's cases at once come
    /// to about 700 (some 75 store cases of 4–10 each, some 20 three-daemon fleets of 15–20 each);
    /// 1000 covers that worst case, so a busy run never meets "too many clients".
    static let maxConnections = 1000

    private var serverOptions: String {
        let tcp = listener.map { "-c listen_addresses='\($0.address)' -c ssl=on -c ssl_cert_file='\($0.certificateFile)' -c ssl_key_file='\($0.keyFile)'" }
        return "-k \(socketDirectory) \(tcp ?? "-c listen_addresses=''") -c max_connections=\(Self.maxConnections) -c fsync=off -p \(port)"
    }

    /// Stops the server if it runs and removes its directory.
    public func stop() {
        if FileManager.default.fileExists(atPath: dataDirectory + "/postmaster.pid") { try? shutDown() }
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A new, empty database owned by ``user``.
    public func createDatabase() throws -> String {
        let name = "vault_\(UInt32.random(in: 0...UInt32.max))"
        try psql("CREATE DATABASE \(name) OWNER \(user);")
        return name
    }

    /// Runs `sql` as the server's administrator (SQL on stdin, so nothing secret is on argv); returns stdout.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try runAsServerUser(["/usr/bin/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", socketDirectory,
                             "-p", String(port), "-d", database], what: "psql", input: Data(sql.utf8))
    }

    @discardableResult
    private func runAsServerUser(_ argv: [String], what: String, input: Data = Data()) throws -> String {
        let user = runsAsNobody ? ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] + argv : argv
        let command = listener.map { ["/usr/sbin/ip", "netns", "exec", $0.namespace] + user } ?? user
        let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C", "PGUSER": runsAsNobody ? "nobody" : (ProcessInfo.processInfo.environment["USER"] ?? "")]
        let (status, out, err) = try Subprocess.run(command, environment: environment, input: input)
        guard status == 0 else {
            let log = (try? String(contentsOfFile: logFile, encoding: .utf8)).map { String($0.suffix(2000)) } ?? ""
            throw HarnessError("\(what) failed with status \(status): \(String(decoding: err, as: UTF8.self))\(String(decoding: out, as: UTF8.self))\n\(log)")
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func writePrivateFile(_ path: String, _ text: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw HarnessError("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw HarnessError("cannot write \(path)") }
    }

    /// `pg_config --bindir`, or Debian's PostgreSQL 15 directory.
    private static func findBinaries() throws -> String {
        if let (status, out, _) = try? Subprocess.run(["/usr/bin/pg_config", "--bindir"], environment: [:], input: Data()), status == 0 {
            let path = String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if FileManager.default.isExecutableFile(atPath: path + "/initdb") { return path }
        }
        let debian = "/usr/lib/postgresql/15/bin"
        guard FileManager.default.isExecutableFile(atPath: debian + "/initdb") else {
            throw HarnessError("PostgreSQL's initdb was not found (pg_config --bindir, \(debian)); install postgresql-15 (scripts/install-deps)")
        }
        return debian
    }
}
