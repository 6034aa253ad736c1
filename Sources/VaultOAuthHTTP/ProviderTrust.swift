import NIOSSL

/// Which certificate authorities an `https` provider's certificate may chain to: the system's
/// (`/etc/ssl/certs`, as Debian's `ca-certificates` keeps them) and any PEM files the user names
/// for a private CA. Nothing else: no certificate is ever accepted unverified.
///
/// ```swift
/// let transport = HTTPClientTransport(trust: ProviderTrust(additionalRoots: ["/etc/sortedvault/corp-ca.pem"]))
/// ```
public struct ProviderTrust: Sendable, Hashable {
    /// PEM files of further trusted root certificates, read when the first connection is made.
    public var additionalRoots: [String]

    /// The system's trust roots only.
    public static let system = ProviderTrust(additionalRoots: [])

    public init(additionalRoots: [String]) {
        self.additionalRoots = additionalRoots
    }

    /// TLS 1.2 or later, full verification (chain and host name) against these roots.
    func tlsConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification
        configuration.trustRoots = .default
        configuration.additionalTrustRoots = additionalRoots.map { .file($0) }
        return configuration
    }
}
