import Foundation
import Logging
import PostgresNIO
import Testing
import TestSupport
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

/// Every suite in this target runs inside one real PostgreSQL, started before the first test and
/// stopped after the last; each test takes a fresh database of its own.
@Suite(.postgresServer, .timeLimit(.minutes(20))) struct PostgresSuite {}

/// Starts a ``PostgresServer`` around the suite it marks (once, not per test).
struct PostgresServerTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        try await SharedServer.$current.withValue(server) { try await function() }
    }
}

extension Trait where Self == PostgresServerTrait {
    static var postgresServer: Self { Self() }
}

enum SharedServer {
    @TaskLocal static var current: PostgresServer?
}

/// One fresh database on a running server, and the ways the tests reach it: as the daemon's store,
/// or as a database administrator would, with plain SQL.
struct FleetDatabase: Sendable {
    let server: PostgresServer
    let name: String

    /// A new database on the suite's shared server.
    static func fresh() throws -> FleetDatabase {
        let server = try #require(SharedServer.current, "the suite is not marked .postgresServer")
        return FleetDatabase(server: server, name: try server.createDatabase())
    }

    /// Deadlines and server timeouts far beyond any call's time, however loaded the machine: they are
    /// real time, and no test that uses these settings is about them (DatabaseDeadlineTests checks the
    /// deadline on a manual clock; the outage and migration tests set their own).
    var settings: PostgresSettings {
        PostgresSettings(endpoint: .unixSocket(directory: server.socketDirectory), port: server.port, database: name,
                         user: server.user, passwordFile: server.passwordFile,
                         statementTimeout: .seconds(120), lockTimeout: .seconds(120), idleInTransactionTimeout: .seconds(300),
                         callDeadline: .seconds(300))
    }

    /// Runs `body` with a running client of its own (its pool, as one daemon has).
    func withClient<T: Sendable>(_ settings: PostgresSettings? = nil, _ body: (PostgresClient) async throws -> T) async throws -> T {
        let client = PostgresClient(configuration: try (settings ?? self.settings).clientConfiguration())
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// Runs `body` with a store as one daemon would have it: its own pool, the fleet's master key.
    func withStore<T: Sendable>(master: SecureBytes, clock: ManualClock = ManualClock(), settings: PostgresSettings? = nil,
                                deadlineClock: any Clock<Duration> = ContinuousClock(),
                                _ body: (PostgresTokenStore) async throws -> T) async throws -> T {
        let settings = settings ?? self.settings
        return try await withClient(settings) { client in
            let store = try await PostgresTokenStore.open(client: client, masterKey: master, clock: clock,
                                                          callDeadline: settings.callDeadline, deadlineClock: deadlineClock)
            return try await body(store)
        }
    }

    /// Plain SQL on its own connection, as the database's administrator sees it.
    func sql(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await withClient { client in try await client.query(query).collect() }
    }
}

/// A fleet master key, as a host's key source would give it.
func masterKey() -> SecureBytes { SecureBytes(randomCount: 32) }

/// Records an issue unless `body` throws a `VaultError` with `code`.
func expectError<T>(_ code: VaultError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async {
    do {
        _ = try await body()
        Issue.record("expected a VaultError \(code), but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as VaultError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a VaultError \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
