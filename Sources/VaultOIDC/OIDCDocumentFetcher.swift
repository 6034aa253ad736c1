import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// How ``OIDCProviderCache`` gets the public documents of a provider: the discovery document and the
/// key set. `VaultOAuthHTTP.HTTPDocumentFetcher` is the real one.
///
/// ```swift
/// let cache = OIDCProviderCache(fetcher: HTTPDocumentFetcher(), clock: SystemClock())
/// ```
///
/// Conformers send a plain `GET` with `Accept: application/json` and no credentials, never follow
/// redirects, bound the total time of a request, and stop reading after
/// ``OIDCProviderCache/maximumDocumentBytes`` (throwing ``OIDCError/documentTooLarge(_:limit:)``).
/// Any other thrown error means "no answer" and is reported as the transient
/// ``OIDCError/Code/discoveryUnreachable``. These documents are public, so the body is plain bytes.
public protocol OIDCDocumentFetcher: Sendable {
    /// The HTTP status and body of a `GET` of `url`.
    func fetch(_ url: URL) async throws -> (status: Int, body: [UInt8])
}
