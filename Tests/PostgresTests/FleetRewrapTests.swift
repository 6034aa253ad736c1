import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession
import VaultTesting

extension PostgresSuite {
    /// Scenario 6: `sortedvault fleet rewrap` through one daemon while three daemons serve reads and
    /// refreshes from the same store. One row is held locked (``HeldRow``), so the rewrap stays in
    /// progress, every other row moved and the old key not yet retired, until the readers have been
    /// served a round of reads in that state: reads go on while a rewrap runs, which a rewrap that
    /// blocked readers (a table lock, one long transaction) would not let them.
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
            let oldKey = before[0].id, newKey = before[0].id + 1

            let done = Flag(), served = Counter()
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
                            case .valid, .refreshed: served.increment()
                            default: failures.append("AutoLogin: \(outcome.outcome)")
                            }
                        } catch {
                            failures.append("a\(index) on daemon \(daemon): \(error)")
                        }
                        reads += 1
                    }
                    return (reads, failures)
                }
            }
            let rewrapEnded = Flag()
            let (rewrapTask, readsDuringRewrap) = try await HeldRow.holding(in: database) { connection in
                let rewrapTask = Task.detached {
                    defer { rewrapEnded.set() }
                    return try fleet.hosts[1].run(["fleet", "rewrap", "--batch-size", "10"])
                }
                // In progress: the new key holds every row but the held one, the old key that one.
                var rows: [Int: Int] = [:]
                let giveUp = ContinuousClock.now + .seconds(600)
                while rows != [oldKey: 1, newKey: Self.items + Self.logins - 1] {
                    guard ContinuousClock.now < giveUp, !rewrapEnded.isSet else {
                        throw HarnessError("the rewrap never reached every row but the held one (rows by key: \(rows); ended: \(rewrapEnded.isSet))")
                    }
                    try await Task.sleep(for: .milliseconds(20))
                    rows = try await HeldRow.rowsByKey(connection)
                }
                let mark = served.value
                try await waitUntil("the readers to be served \(2 * Self.items) reads while the rewrap is in progress") {
                    served.value >= mark + 2 * Self.items
                }
                #expect(!rewrapEnded.isSet, "the rewrap ended while a row it must move was locked")
                #expect(try await HeldRow.isActive(oldKey, connection), "the old key was retired while a row still used it")
                return (rewrapTask, served.value - mark)
            }
            // The row is free: the rewrap's next look (after a pause on the daemons' clock) moves it.
            let ticker = Task {
                while !rewrapEnded.isSet && !Task.isCancelled {
                    fleet.clock.advance(by: 1)
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            defer { ticker.cancel() }
            let rewrap = try await hangGuard(seconds: 600) { try await rewrapTask.value }
            done.set()
            var reads = 0
            for reader in readers {
                let result = try await hangGuard(seconds: 600) { await reader.value }
                reads += result.reads
                #expect(result.failures.isEmpty, "\(result.failures.prefix(5))")
            }
            #expect(rewrap.status == 0, "\(rewrap.stderr)")
            #expect(rewrap.text.contains("under data key \(newKey); retired data keys: \(oldKey)"), "\(rewrap.text)")

            let after = try #require(try await fleet.sessions(2).fleetStatus().dataKeys)
            #expect(after == [DataKeyUse(id: newKey, rows: Self.items + Self.logins)], "\(after)")
            #expect(try await provider.refreshRequests() == Self.logins, "each login refreshed once across the fleet")
            for index in [0, Self.items / 2, Self.items - 1] {
                let item = try await fleet.items(index % 3).retrieve(service: "fleet.api", account: "a\(index)")
                #expect(item.secret.constantTimeEquals(Array("secret-\(index)".utf8)))
            }
            print("fleet rewrap: \(reads) reads in all, \(readsDuringRewrap) of them while the rewrap was held in progress")
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

/// Reads served in full (the item's secret and a valid login), counted across the readers.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
