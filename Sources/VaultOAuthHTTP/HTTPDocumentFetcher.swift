import AsyncHTTPClient
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultOIDC

/// The real ``OIDCDocumentFetcher``: a `GET` with `Accept: application/json` through the same
/// engine as ``HTTPClientTransport`` (no cookies, cache or proxy, redirects refused, system trust
/// roots), at most ``OIDCProviderCache/maximumDocumentBytes`` read, and one deadline for the whole
/// request, however slowly the provider trickles its answer.
///
/// ```swift
/// let cache = OIDCProviderCache(fetcher: HTTPDocumentFetcher(), clock: SystemClock())
/// ```
///
/// It sends nothing secret: discovery documents and key sets are public.
public final class HTTPDocumentFetcher: OIDCDocumentFetcher, Sendable {
    private let engine: ProviderHTTPClient

    /// - Parameters:
    ///   - deadline: the most one fetch may take, from the first byte sent to the last one read.
    ///   - trust: the certificate authorities a provider may be signed by (the system's unless told).
    ///   - clock: what measures the deadline (a test may pass its own).
    public init<C: Clock>(deadline: Duration = .seconds(10), trust: ProviderTrust = .system, clock: C = ContinuousClock())
    where C.Duration == Duration {
        engine = ProviderHTTPClient(deadline: deadline, deadlineText: "\(deadline)",
                                    maximumBodyBytes: OIDCProviderCache.maximumDocumentBytes, trust: trust, clock: clock)
    }

    public func fetch(_ url: URL) async throws -> (status: Int, body: [UInt8]) {
        do {
            try SecureEndpoint.check(url, what: "OpenID Connect document URL")
        } catch {
            throw OIDCError(.malformedDocument, "\(error)")
        }
        let target = try ProviderTarget(url)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/json")
        let tooLarge = OIDCError.documentTooLarge(url, limit: OIDCProviderCache.maximumDocumentBytes)
        return try await engine.send(request, host: target.host, port: target.port, ifTooLarge: tooLarge) { status, body in
            (status: status, body: Array(body))
        }
    }
}
