import Foundation
import Testing
import TestSupport
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// Issue 22's scenario 4, a partition: PostgreSQL runs in a network namespace and takes TLS
    /// connections (a CA and an IP-SAN certificate made for the test, `hostssl` with scram) on a
    /// private veth link; two stores reach it as two daemons would, given the CA as `ca_file`. The
    /// link is then cut in silence (no FIN, no RST) for many call deadlines on the stores' clock: each
    /// call answers `unavailable` or a storage error, none hangs, and the idle listening connection
    /// finds out it is dead. Once the link is back, calls work again, the listening connection has
    /// been made again and delivers hints, and nothing written before the cut is lost.
    @Suite(.enabled(if: CIRequirement.runs(where: NetworkPartition.available), Comment(rawValue: NetworkPartition.missing)))
    struct FleetPartitionTests {
        @Test func aPartitionedDatabaseAnswersWithinTheDeadlineAndTheListenConnectionReconnects() async throws {
            let remote = try PartitionedPostgres()
            defer { remote.stop() }
            let (link, server) = (remote.link, remote.server)
            let database = FleetDatabase(server: server, name: try server.createDatabase())
            let settings = PostgresSettings(endpoint: .tcp(host: link.namespaceAddress), port: server.port, database: database.name,
                                            user: server.user, passwordFile: server.passwordFile, trustRootsFile: remote.caFile,
                                            callDeadline: .seconds(30))
            let listenConfiguration = try settings.listenConfiguration()
            let sleeper = ManualSleepClock()
            let clock = ManualClock(mirror: sleeper.reach)
            let master = masterKey()
            let item = try ItemKey(service: "com.sorted.api", account: "ada")

            // First the server is reached over TLS on real time: each try (a new pool, migrating the
            // database) is bounded by the call deadline, and tried again. Full runs beside two CPU
            // hogs spent the whole time limit before the first guard below, with no error to name.
            try await withHangGuard(limit: .seconds(600), "the partitioned server reached over TLS") {
                try await Self.eventually { try await database.withStore(master: master, clock: clock, settings: settings) { _ in } }
            }
            try await database.withStore(master: master, clock: clock, settings: settings, deadlineClock: sleeper) { a in
                try await database.withStore(master: master, clock: clock, settings: settings, deadlineClock: sleeper) { b in
                    let listener = Task { await b.listenForChanges(listenConfiguration) }
                    defer { listener.cancel() }
                    // The stores' clock moves only while the first listening connection is missing,
                    // so an attempt that failed (its connect met the real-time connect timeout on a
                    // loaded machine) is made again after its pause on that clock.
                    try await withHangGuard(limit: .seconds(240), "the first listening connection") {
                        while b.changeHintConnections == 0 {
                            clock.advance(by: 0.5)
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    }
                    try await a.store(SecureBytes(copying: [1]), for: item, options: .none)
                    let connectionsBeforeTheCut = b.changeHintConnections

                    try link.cut()
                    // From the cut until the listening connection is back, the stores' clock runs a
                    // call deadline and more every 200 ms; it stands still otherwise, so no call made
                    // on a connected link meets its deadline however busy the machine is.
                    let ticker = Task {
                        while !Task.isCancelled {
                            clock.advance(by: 31)
                            try? await Task.sleep(for: .milliseconds(200))
                        }
                    }
                    defer { ticker.cancel() }
                    for step in 0..<4 {
                        do {
                            _ = try await withHangGuard(limit: .seconds(60), "call \(step) during the partition") { try await a.retrieve(item) }
                            Issue.record("call \(step) during the partition succeeded")
                        } catch let error as VaultError {
                            #expect(error.code == .unavailable || error.code == .storageFailure, "\(error)")
                        }
                    }
                    try await Task.sleep(for: .seconds(2))   // 2 s real, many deadlines on the stores' clock
                    try link.restore()

                    try await withHangGuard(limit: .seconds(240), "the listening connection made again after the partition") {
                        while b.changeHintConnections <= connectionsBeforeTheCut { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    ticker.cancel()
                    let before = try await withHangGuard(limit: .seconds(180), "a read after the partition") {
                        try await Self.eventually { try await b.retrieve(item) }
                    }
                    #expect(before.secret == SecureBytes(copying: [1]))
                    let hints = try #require(await b.changes(of: item))
                    try await withHangGuard(limit: .seconds(180), "a write after the partition") {
                        try await Self.eventually { try await a.store(SecureBytes(copying: [2]), for: item, options: .none) }
                    }
                    #expect(try await withHangGuard(limit: .seconds(120), "the write's hint") { await hints.first { _ in true } } != nil,
                            "no hint after the link came back")
                    #expect(try await b.retrieve(item).secret == SecureBytes(copying: [2]))
                }
            }
        }

        /// `call`'s result once it succeeds: the pools find their connections again with a backoff of their own.
        static func eventually<T: Sendable>(_ call: @Sendable () async throws -> T) async throws -> T {
            while true {
                do { return try await call() } catch is VaultError { try await Task.sleep(for: .milliseconds(250)) }
            }
        }
    }
}
