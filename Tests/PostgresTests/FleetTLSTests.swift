import Foundation
import Testing
import TestSupport
import VaultCore

extension PostgresSuite {
    /// A daemon reaches a remote PostgreSQL by IP address over TLS. postgres-nio sends no server name
    /// for an address (SNI carries names only), so the check that the certificate is the server's is
    /// swift-nio-ssl's: the certificate's IP SANs against the address connected to. A certificate
    /// signed by the CA in `ca_file`, but for another address, is refused, and the daemon says why.
    @Suite(.enabled(if: CIRequirement.runs(where: NetworkPartition.available), Comment(rawValue: NetworkPartition.missing)))
    struct FleetTLSTests {
        @Test func aCertificateForAnotherAddressIsRefusedAndTheDaemonSaysSo() async throws {
            // Signed by the CA the daemon trusts and valid in every other way, for the link's other end.
            let remote = try PartitionedPostgres(certifyingThisEnd: true)
            defer { remote.stop() }
            let fleet = try FleetDaemons(count: 1, database: FleetDatabase(server: remote.server, name: try remote.server.createDatabase()),
                                         callDeadlineSeconds: 5, start: false)
            defer { fleet.stopAll() }
            try fleet.reachOverTLS(0, host: remote.link.namespaceAddress, caFile: remote.caFile)

            // The daemon's database deadlines run on the fleet's clock: keep it moving until it gives up.
            let ticker = Task {
                while !Task.isCancelled {
                    fleet.clock.advance(by: 6)
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
            defer { ticker.cancel() }
            let refused = "\(try #require(throws: HarnessError.self) { try fleet.start(0) })"
            #expect(refused.contains("refusing to start"), "\(refused)")
            #expect(refused.contains("certificate does not name the host"), "\(refused)")
        }
    }
}
