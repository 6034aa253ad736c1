import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private link into a network namespace of its own, which a test can cut without a word:
/// a veth pair, this side `10.R.S.1/24`, the namespace's side `10.R.S.2/24`, no route anywhere else.
/// With ``tlsFiles(in:)`` it also makes a CA and a server certificate for the namespace's address.
///
/// ```swift
/// let link = try NetworkPartition()
/// defer { link.remove() }
/// try link.cut()       // the namespace's side goes down: packets are dropped, no RST, no FIN
/// try link.restore()
/// ```
///
/// Needs root (`ip netns add`); ``available`` says whether it can be made here.
public final class NetworkPartition: Sendable {
    public let namespace: String
    public let hostAddress: String
    public let namespaceAddress: String
    private let hostDevice: String
    private let namespaceDevice: String

    /// Whether this process may make namespaces (root, `ip` installed, the kernel allows it).
    public static let available: Bool = {
        guard geteuid() == 0 else { return false }
        let name = "sv-probe-\(UInt32.random(in: 0...UInt32.max))"
        guard (try? ip(["netns", "add", name])) != nil else { return false }
        try? ip(["netns", "del", name])
        return true
    }()

    /// What ``available`` needs, and how to get it: the text of a skip, or of a failure under CI.
    public static let missing = "root and iproute2's ip making a network namespace (ip netns add): "
        + "run as root after apt-get install iproute2 (scripts/install-deps)"

    public init() throws {
        try CIRequirement.require(Self.available, Self.missing)
        let tag = UInt32.random(in: 0...0xffff)
        namespace = "sv-part-\(tag)"
        hostDevice = "svp\(tag)h"
        namespaceDevice = "svp\(tag)n"
        let subnet = "10.\(200 + tag % 50).\(tag % 250)"
        hostAddress = subnet + ".1"
        namespaceAddress = subnet + ".2"
        try Self.ip(["netns", "add", namespace])
        do {
            try Self.ip(["link", "add", hostDevice, "type", "veth", "peer", "name", namespaceDevice, "netns", namespace])
            try Self.ip(["addr", "add", hostAddress + "/24", "dev", hostDevice])
            try Self.ip(["link", "set", hostDevice, "up"])
            try inside(["addr", "add", namespaceAddress + "/24", "dev", namespaceDevice])
            try inside(["link", "set", namespaceDevice, "up"])
            try inside(["link", "set", "lo", "up"])
        } catch {
            remove()
            throw error
        }
    }

    /// Takes the namespace's side of the link down: this side keeps its address and route, so what
    /// it sends is dropped in silence, as on a partitioned network.
    public func cut() throws { try inside(["link", "set", namespaceDevice, "down"]) }

    public func restore() throws { try inside(["link", "set", namespaceDevice, "up"]) }

    /// Deletes the link and the namespace (any process still inside keeps it until it ends).
    public func remove() {
        try? Self.ip(["link", "del", hostDevice])
        try? Self.ip(["netns", "del", namespace])
    }

    /// A CA and a server certificate for ``namespaceAddress`` (an IP SAN), made with the openssl CLI
    /// in `directory`; the key is chowned to `nobody` under root, mode 0600, for PostgreSQL to read.
    /// `certifying` names another address for the certificate (its SAN and CN): a server that shows it
    /// from ``namespaceAddress`` is not the server the client asked for.
    public func tlsFiles(in directory: String, certifying certified: String? = nil) throws -> (caFile: String, certificateFile: String, keyFile: String) {
        let certified = certified ?? namespaceAddress
        let ca = directory + "/ca.crt", caKey = directory + "/ca.key"
        let certificate = directory + "/server.crt", key = directory + "/server.key", request = directory + "/server.csr"
        let extensions = directory + "/server.ext"
        try "subjectAltName=IP:\(certified)\n".write(toFile: extensions, atomically: false, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try Self.run(["/usr/bin/openssl", "req", "-x509"] + curve + ["-keyout", caKey, "-out", ca, "-subj", "/CN=sortedvault test CA", "-days", "2"])
        try Self.run(["/usr/bin/openssl", "req"] + curve + ["-keyout", key, "-out", request, "-subj", "/CN=\(certified)"])
        try Self.run(["/usr/bin/openssl", "x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial",
                      "-out", certificate, "-days", "2", "-extfile", extensions])
        chmod(key, 0o600)
        if geteuid() == 0, let nobody = getpwnam("nobody")?.pointee {
            chown(key, nobody.pw_uid, nobody.pw_gid)
            chmod(directory, 0o755)
        }
        return (ca, certificate, key)
    }

    private func inside(_ arguments: [String]) throws { try Self.ip(["-n", namespace] + arguments) }

    private static func ip(_ arguments: [String]) throws { try run(["/usr/sbin/ip"] + arguments) }

    private static func run(_ argv: [String]) throws {
        let (status, out, err) = try Subprocess.run(argv, environment: ["PATH": "/usr/sbin:/usr/bin:/bin"], input: Data())
        guard status == 0 else {
            throw HarnessError("\(argv.joined(separator: " ")) failed with status \(status): \(String(decoding: err + out, as: UTF8.self))")
        }
    }
}
