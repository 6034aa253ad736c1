import Foundation
import Logging
import PostgresNIO
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession
import VaultTesting

extension PostgresSuite {
    /// Scenario 6: `sortedvault fleet rewrap` through one daemon while three daemons serve reads and
    /// refreshes from the same store.
    @Suite struct FleetRewrapTests {
        static let items = 120
        static let logins = 3

        @Test func aRewrapWhileThreeDaemonsServeFailsNoReadAndRetiresTheOldKey() async throws {
            let database = try FleetDatabase.fresh()
            let fleet = try FleetDaemons(count: 3, database: database)
            defer { fleet.stopAll() }
            let provider = try OAuthTestProvider()
            for index in 0..<Self.items {
                try await fleet.items(index % 3).store(SecureBytes(copying: Array("secret-\(index)".utf8)), service: "fleet.api",
                                                       account: "a\(index)")
            }
            let keys = try (0..<Self.logins).map { try ItemKey(service: "com.sorted.api", account: "user\($0)") }
            for key in keys { _ = try await FleetDaemonTests.signIn(fleet.sessions(0), provider, key: key) }
            let before = try #require(try await fleet.sessions(0).fleetStatus().dataKeys)
            #expect(before.count == 1 && before[0].rows == Self.items + Self.logins, "\(before)")
            fleet.clock.advance(by: 3600)  // every access token has expired: the next AutoLogin of each refreshes

            let done = Flag()
            let served = Locked(0)   // reads served by all readers so far
            let readers = (0..<3).map { daemon in
                Task { () -> (reads: Int, failures: [String]) in
                    var reads = 0, failures: [String] = []
                    while !done.isSet || reads < 2 * Self.items {
                        let index = reads % Self.items
                        do {
                            let item = try await fleet.items(daemon).retrieve(service: "fleet.api", account: "a\(index)")
                            if !item.secret.constantTimeEquals(Array("secret-\(index)".utf8)) { failures.append("a\(index): another secret") }
                            let outcome = try await fleet.sessions(daemon).autoLogin(keys[reads % keys.count])
                            switch outcome {
                            case .valid, .refreshed: break
                            default: failures.append("AutoLogin: \(outcome.outcome)")
                            }
                        } catch {
                            failures.append("a\(index) on daemon \(daemon): \(error)")
                        }
                        reads += 1
                        served.withLock { $0 += 1 }
                    }
                    return (reads, failures)
                }
            }
            try await waitUntil("the readers to be served") { served.withLock { $0 } > 0 }
            // Until every login's refresh is stored: from then on the readers only read.
            for key in keys {
                while true {
                    if case .valid = try await fleet.sessions(0).autoLogin(key) { break }
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            // Every login is refreshed and stored: from here the readers only read. One row stays locked while
            // the rewrap runs: the rewrap skips it (SKIP LOCKED), moves the others and cannot retire
            // the old key, so it is held half-way, both keys in use, until the readers have been
            // served that way; then the row is let go and the rewrap ends.
            let oldKey = before[0].id
            let (rewrapTask, servedDuring) = try await database.withClient { client in
                try await client.withTransaction(logger: Logger(label: "test")) { connection in
                    _ = try await connection.query("SELECT lookup FROM sortedvault_items ORDER BY lookup LIMIT 1 FOR UPDATE",
                                                   logger: Logger(label: "test")).collect()
                    let ended = Flag()
                    let rewrap = Task.detached {
                        defer { ended.set() }
                        return try fleet.hosts[1].run(["fleet", "rewrap", "--batch-size", "10"])
                    }
                    while !ended.isSet {
                        let moved = try await client.query("SELECT count(*) FROM sortedvault_items WHERE key_id > \(oldKey)").collect()
                        if try moved.first?.decode(Int64.self) == Int64(Self.items + Self.logins - 1) { break }
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    let mark = served.withLock { $0 }
                    try await waitUntil("reads served while the rewrap is half-way") { ended.isSet || served.withLock { $0 } >= mark + 3 * Self.logins }
                    return (rewrap, served.withLock { $0 } - mark)
                }
            }
            // Held, the rewrap waits between its rounds on the daemons' clock: a second lets it look again.
            fleet.clock.advance(by: 1)
            let rewrap = try await rewrapTask.value
            done.set()
            var reads = 0
            for reader in readers {
                let result = await reader.value
                reads += result.reads
                #expect(result.failures.isEmpty, "\(result.failures.prefix(5))")
            }
            #expect(servedDuring >= 3 * Self.logins, "the rewrap ended before the readers were served while it was half-way")
            print("fleet rewrap: \(reads) reads in all, \(servedDuring) of them while the rewrap was half-way")
            #expect(rewrap.status == 0, "\(rewrap.stderr)")
            let newKey = before[0].id + 1
            #expect(rewrap.text.contains("under data key \(newKey); retired data keys: \(before[0].id)"), "\(rewrap.text)")

            let after = try #require(try await fleet.sessions(2).fleetStatus().dataKeys)
            #expect(after == [DataKeyUse(id: newKey, rows: Self.items + Self.logins)], "\(after)")
            #expect(try await provider.refreshRequests() == Self.logins, "each login refreshed once across the fleet")
            for index in [0, Self.items / 2, Self.items - 1] {
                let item = try await fleet.items(index % 3).retrieve(service: "fleet.api", account: "a\(index)")
                #expect(item.secret.constantTimeEquals(Array("secret-\(index)".utf8)))
            }
        }
    }
}

/// A flag set once, read from several tasks.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
