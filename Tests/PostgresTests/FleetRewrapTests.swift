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
    /// refreshes from the same store.
    @Suite struct FleetRewrapTests {
        static let items = 120
        static let logins = 3

        @Test func aRewrapWhileThreeDaemonsServeFailsNoReadAndRetiresTheOldKey() async throws {
            let fleet = try FleetDaemons(count: 3, database: try FleetDatabase.fresh())
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
            let servedBefore = served.withLock { $0 }
            let rewrap = try await Task.detached { try fleet.hosts[1].run(["fleet", "rewrap", "--batch-size", "10"]) }.value
            let servedDuring = served.withLock { $0 } - servedBefore
            done.set()
            var reads = 0
            for reader in readers {
                let result = await reader.value
                reads += result.reads
                #expect(result.failures.isEmpty, "\(result.failures.prefix(5))")
            }
            #expect(servedDuring > 0, "no read was served while the rewrap ran")
            print("fleet rewrap: \(reads) reads in all, \(servedDuring) of them while the rewrap ran")
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
