import Foundation
import TestSupport

/// PostgreSQL in a network namespace of its own (``NetworkPartition``), taking TLS connections only,
/// on the far end of the link, with a CA and a server certificate made for the test. Its Unix socket
/// stays reachable from this side, so a fleet may reach it both ways.
///
/// ```swift
/// let remote = try PartitionedPostgres()
/// defer { remote.stop() }
/// try fleet.reachOverTLS(0, host: remote.link.namespaceAddress, caFile: remote.caFile)
/// try remote.link.cut()
/// ```
///
/// Needs root, as ``NetworkPartition`` does.
final class PartitionedPostgres {
    let link: NetworkPartition
    let server: PostgresServer
    /// The CA that signed the server's certificate: the daemons' `ca_file`.
    let caFile: String
    private let directory: String

    /// - Parameter certifyingThisEnd: the server's certificate names this end of the link instead of
    ///   the far end, where the server listens (a certificate for another host).
    init(certifyingThisEnd: Bool = false) throws {
        let link = try NetworkPartition()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-partition-\(UUID())").path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let tls = try link.tlsFiles(in: directory, certifying: certifyingThisEnd ? link.hostAddress : nil)
            server = try PostgresServer.start(listener: .init(namespace: link.namespace, address: link.namespaceAddress,
                                                              certificateFile: tls.certificateFile, keyFile: tls.keyFile))
            caFile = tls.caFile
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            link.remove()
            throw error
        }
        self.link = link
        self.directory = directory
    }

    func stop() {
        server.stop()
        try? FileManager.default.removeItem(atPath: directory)
        link.remove()
    }
}
