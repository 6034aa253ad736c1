import Foundation
import VaultCore
import VaultOIDC

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real ``OIDCDocumentFetcher``: a `GET` through an ephemeral URLSession (no cookies, cache or
/// credential store), `Accept: application/json`, redirects refused, at most
/// ``OIDCProviderCache/maximumDocumentBytes`` read, and one deadline for the whole request
/// (connection, headers and body), however slowly the provider trickles its answer.
///
/// ```swift
/// let cache = OIDCProviderCache(fetcher: URLSessionDocumentFetcher(), clock: SystemClock())
/// ```
///
/// It sends nothing secret: discovery documents and key sets are public.
public final class URLSessionDocumentFetcher: NSObject, OIDCDocumentFetcher, @unchecked Sendable {
    // Invariant: only constants here; the engine guards its own state with its lock.
    private let engine: BoundedHTTPSession

    /// - Parameters:
    ///   - deadline: the most one fetch may take, from the first byte sent to the last one read.
    ///   - clock: what measures the deadline (a test may pass its own).
    public init<C: Clock>(deadline: Duration = .seconds(10), clock: C = ContinuousClock()) where C.Duration == Duration {
        // Its session is made on first use, like `URLSessionTransport`'s.
        self.engine = BoundedHTTPSession(deadline: deadline, deadlineText: "\(deadline)",
                                         maximumBodyBytes: OIDCProviderCache.maximumDocumentBytes, clock: clock)
        super.init()
    }

    public func fetch(_ url: URL) async throws -> (status: Int, body: [UInt8]) {
        do {
            try SecureEndpoint.check(url, what: "OpenID Connect document URL")
        } catch {
            throw OIDCError(.malformedDocument, "\(error)")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        request.httpMethod = "GET"
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let tooLarge = OIDCError.documentTooLarge(url, limit: OIDCProviderCache.maximumDocumentBytes)
        return try await engine.send(request, ifTooLarge: tooLarge) { status, body in (status: status, body: Array(body)) }
    }
}
