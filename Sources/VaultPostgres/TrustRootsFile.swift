import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import PostgresNIO
import VaultCore

/// Reads the PEM certificate authorities of `[postgresql] ca_file`, refusing a file that someone
/// other than the daemon's user or root could change (``CheckedFile``, rule `trusted`): whoever
/// writes it chooses the database server the daemon sends its password to.
enum TrustRootsFile {
    static let maximumBytes = 1 << 20

    /// The certificates, parsed from the bytes that were checked (never re-opened by path).
    static func read(_ path: String) throws -> [NIOSSLCertificate] {
        let bytes = try CheckedFile.read(path, what: "the database CA file ([postgresql] ca_file)", rule: .trusted,
                                         maximumBytes: maximumBytes)
        let certificates = (try? NIOSSLCertificate.fromPEMBytes(bytes)) ?? []
        guard !certificates.isEmpty else {
            throw VaultError(.keySourceRejected,
                             "the database CA file \(path.debugDescription) holds no PEM certificate; give the CA that signed the database server's certificate")
        }
        return certificates
    }
}
