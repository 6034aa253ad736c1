import Foundation
import NIOPosix
import TestSupport
import VaultClient
import VaultTesting

#if canImport(Glibc)
import Glibc
#endif

/// Real `sortedvault daemon` processes of one fleet: each its own socket and state directory
/// (a ``CLIHarness`` world), all with `backend = "postgresql"` on one database and one key file, and
/// all reading the test's manual clock from one file (their timers and database deadlines sleep on it).
///
/// ```swift
/// let fleet = try FleetDaemons(count: 2, database: try FleetDatabase.fresh())
/// try await fleet.items(0).store(secret, service: "s", account: "a")
/// _ = try await fleet.items(1).retrieve(service: "s", account: "a")
/// ```
final class FleetDaemons: @unchecked Sendable {
    let database: FleetDatabase
    let hosts: [CLIHarness]
    let keyFile: String
    let clock: ManualClock
    let clockFile: String
    let callDeadlineSeconds: Int
    /// `[session] provider_deadline_seconds`; nil leaves the daemons' own.
    let providerDeadlineSeconds: Int?
    /// The clients' blocking socket calls run here, not on NIO's shared pool (one thread per core):
    /// a call waiting on a held provider answer must not keep the test's next call from running, so
    /// there are more threads than any test makes calls at once (12: six held, six clients').
    let threadPool = NIOThreadPool(numberOfThreads: 16)

    init(count: Int, database: FleetDatabase, callDeadlineSeconds: Int = 30, providerDeadlineSeconds: Int? = nil, start: Bool = true) throws {
        self.database = database
        self.callDeadlineSeconds = callDeadlineSeconds
        self.providerDeadlineSeconds = providerDeadlineSeconds
        threadPool.start()
        hosts = try (0..<count).map { _ in try CLIHarness(autostart: false) }
        keyFile = hosts[0].root + "/fleet.key"
        clockFile = hosts[0].root + "/clock"
        let clockFile = clockFile
        clock = ManualClock(start: Date()) { date in
            try? "\(date.timeIntervalSince1970)".write(toFile: clockFile, atomically: true, encoding: .utf8)
        }
        try writeKeyFile()
        for host in hosts { try host.writePolicy(settings: settingsText) }
        if start { for index in hosts.indices { try self.start(index) } }
    }

    /// The settings every daemon of the fleet reads: proactive refresh off, so only the tests' calls
    /// reach a provider.
    var settingsText: String {
        """
        backend = "postgresql"
        [session]
        proactive_refresh_seconds = 0
        \(providerDeadlineSeconds.map { "provider_deadline_seconds = \($0)" } ?? "")
        [postgresql]
        socket_directory = "\(database.server.socketDirectory)"
        port = \(database.server.port)
        database = "\(database.name)"
        user = "\(database.server.user)"
        password_file = "\(database.server.passwordFile)"
        key_file = "\(keyFile)"
        call_deadline_seconds = \(callDeadlineSeconds)

        """
    }

    /// Points daemon `index` at the database over TCP with TLS (`host`, `ca_file`) instead of the
    /// server's Unix socket; takes effect at its next start.
    func reachOverTLS(_ index: Int, host: String, caFile: String) throws {
        let text = settingsText.replacingOccurrences(of: "socket_directory = \"\(database.server.socketDirectory)\"",
                                                     with: "host = \"\(host)\"\nca_file = \"\(caFile)\"")
        guard text != settingsText else { throw HarnessError("the fleet's settings name no socket directory") }
        try text.write(toFile: hosts[index].configDir + "/policy/settings.toml", atomically: false, encoding: .utf8)
    }

    func start(_ index: Int) throws {
        try hosts[index].startDaemon(extraArguments: ["--unsafe-clock-file", clockFile], timeout: 600)
    }

    func items(_ index: Int) -> VaultClient {
        VaultClient(socketPath: hosts[index].socket, timeout: .seconds(120), threadPool: threadPool)
    }

    func sessions(_ index: Int) -> SessionClient {
        SessionClient(socketPath: hosts[index].socket, timeout: .seconds(120), threadPool: threadPool)
    }

    deinit {
        try? threadPool.syncShutdownGracefully()
    }

    func stopAll() {
        for host in hosts { host.stopDaemon() }
    }

    /// 32 random bytes, mode 0600: the one key file every host of the fleet is given.
    private func writeKeyFile() throws {
        let descriptor = open(keyFile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw HarnessError("cannot create \(keyFile)") }
        defer { close(descriptor) }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        guard write(descriptor, bytes, 32) == 32 else { throw HarnessError("cannot write \(keyFile)") }
    }
}
