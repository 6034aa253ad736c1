import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

/// Why a provider's certificate was refused, in the user's words: "has expired", "is self-signed",
/// "does not name login.example.com", "is not signed by a certificate authority this machine trusts".
///
/// BoringSSL reports every failed chain as one error, `CERTIFICATE_VERIFY_FAILED`. To name the
/// reason, the refusal is diagnosed after the fact: a second handshake with the same host, which
/// sends nothing but a TLS ClientHello, hands the presented chain to a callback that reads its
/// dates and names and then aborts the handshake. Nothing of that connection is trusted or used;
/// it only chooses the words of the error.
struct TLSRefusal: CustomStringConvertible {
    let description: String

    /// The reason `error` is a refused certificate of `host`, or nil when it is not a refusal.
    init?(_ error: any Error, host: String, port: Int, trust: ProviderTrust) async {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            description = "does not name \(host)"
            return
        }
        guard case NIOSSLError.handshakeFailed(let failure) = error else {
            if let error = error as? NIOSSLError {
                description = "could not be checked (\(error))"
                return
            }
            return nil
        }
        guard String(describing: failure).firstRange(of: "CERTIFICATE_VERIFY_FAILED") != nil else {
            description = "could not be checked (TLS handshake failed: \(failure))"
            return
        }
        description = await Self.diagnose(host: host, port: port, trust: trust)
            ?? "could not be verified against the trusted certificate authorities"
    }

    /// Shakes hands once more and reads the chain the server presents.
    private static func diagnose(host: String, port: Int, trust: ProviderTrust) async -> String? {
        let group = MultiThreadedEventLoopGroup.singleton
        let reason = group.next().makePromise(of: String?.self)
        let settled = NIOLockedValueBox(false)
        let settle: @Sendable (String?) -> Void = { text in
            let first = settled.withLockedValue { done in
                defer { done = true }
                return !done
            }
            if first { reason.succeed(text) }
        }
        do {
            let context = try NIOSSLContext(configuration: trust.tlsConfiguration())
            let isAddress = host.contains(":" as Character) || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
            let channel = try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host,
                                                              customVerificationCallback: { chain, verdict in
                            settle(Self.reason(for: chain))
                            verdict.succeed(.failed)
                        })
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(host: host, port: port).get()
            channel.closeFuture.whenComplete { _ in settle(nil) }
            let text = try await reason.futureResult.get()
            channel.close(promise: nil)
            return text
        } catch {
            settle(nil)
            return nil
        }
    }

    /// Reads the leaf certificate (first in `chain`) against the time now.
    static func reason(for chain: [NIOSSLCertificate]) -> String {
        guard let leaf = chain.first else { return "was not presented" }
        let now = time(nil)
        if leaf.notValidAfter < now { return "has expired" }
        if leaf.notValidBefore > now { return "is not valid yet" }
        if chain.count == 1 && leaf.subjectName == leaf.issuerName { return "is self-signed" }
        let issuer = leaf.issuerName.first { $0.type == .commonName }.map { " (issued by \"\($0.value)\")" } ?? ""
        return "is not signed by a certificate authority this machine trusts\(issuer)"
    }
}
