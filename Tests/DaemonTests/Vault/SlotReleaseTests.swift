import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// A connection the client closed no longer counts when the daemon judges the next one.
    @Suite struct SlotReleaseTests {
        @Test func aClientThatClosesAllItsConnectionsIsServedWhenItReconnectsAtOnce() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.writePolicy(settings: "max_connections_per_uid = 4\n")
            try cli.startDaemon()
            let status = frame(#"{"method":"org.sortedvault.vault.Status"}"#)
            var refusals: [String] = []
            for round in 0..<200 {
                // Four connections (all the uid may hold), each served, all closed; then four again at once.
                for phase in ["first", "again"] {
                    var clients = try (0..<4).map { _ in try RawSocket(path: cli.socket) }
                    for client in clients { client.send(status) }
                    for client in clients {
                        let reply = client.readReply()
                        if reply?["parameters"] == nil { refusals.append("round \(round), \(phase): \(String(describing: reply))") }
                    }
                    clients.removeAll()
                }
            }
            #expect(refusals.isEmpty, "\(refusals.count) refusals: \(refusals.prefix(5))")
        }

        /// What `aSocketActivatedDaemonServesTheInheritedListener` once tripped over: a burst of
        /// probes that connect and close at once (many still waiting to be accepted), then the CLI.
        @Test func theCLIIsServedRightAfterAThousandProbeConnections() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            for round in 0..<10 {
                for _ in 0..<1000 { _ = cli.socketAnswers() }
                let status = try cli.run(["status", "--no-autostart"])
                #expect(status.status == 0, "round \(round): \(status.stderr)")
            }
        }
    }
}
