import AsyncHTTPClient
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
import VaultCore
import VaultCrypto
import VaultSession

/// The real ``OAuthTransport``: AsyncHTTPClient on the process's event loops, TLS from
/// swift-nio-ssl, no cookies, no cache, no proxy, redirects refused so tokens and client
/// credentials go only to the configured endpoint, a bounded answer and one deadline per request
/// (``ProviderHTTPClient`` has the rules).
///
/// The deadline is total, from the request's start to its last byte, measured on the injected
/// clock: a provider sending one byte every 2 s cannot hold a refresh open. When it passes, the
/// request is cancelled and fails as "did not answer". Cancelling the calling task cancels the
/// request too.
///
/// ```swift
/// let sessions = SessionManager(store: vault, transport: HTTPClientTransport(), clock: SystemClock())
/// ```
///
/// The body goes out of secure memory into one buffer of ours, wiped when the request is done. The
/// `Authorization` header and secret headers become header strings, as HTTP/1.1 and HTTP/2 encoders
/// need them; those copies are not wiped.
public final class HTTPClientTransport: OAuthTransport, Sendable {
    private let timeout: TimeInterval
    private let engine: ProviderHTTPClient

    /// The deadline of a transport made without one, as the daemon makes its own, in seconds.
    public static let defaultTimeout: TimeInterval = 15

    /// - Parameters:
    ///   - timeout: the most one request may take in all, connection included, in seconds.
    ///   - trust: the certificate authorities a provider may be signed by (the system's unless told).
    ///   - clock: what measures it; tests may pass their own `Clock` (the deadline is a real wait).
    public init<C: Clock>(timeout: TimeInterval = defaultTimeout, trust: ProviderTrust = .system, clock: C) where C.Duration == Duration {
        self.timeout = timeout
        engine = ProviderHTTPClient(deadline: .milliseconds(Int64(timeout * 1000)), deadlineText: "\(Int(timeout)) s",
                                    maximumBodyBytes: OAuthHTTPResponse.maximumBodyBytes, trust: trust, clock: clock)
    }

    /// A transport whose deadline runs on `ContinuousClock`.
    public convenience init(timeout: TimeInterval = defaultTimeout, trust: ProviderTrust = .system) {
        self.init(timeout: timeout, trust: trust, clock: ContinuousClock())
    }

    public var requestDeadline: TimeInterval { timeout }

    public func post(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        let target = try ProviderTarget(request.url)
        var outgoing = HTTPClientRequest(url: request.sendURL().absoluteString)
        outgoing.method = .POST
        outgoing.headers.add(name: "Content-Type", value: request.bodyFormat.contentType)
        outgoing.headers.add(name: "Accept", value: "application/json")
        outgoing.headers.add(name: "Cache-Control", value: "no-store")
        if let authorization = request.authorization {
            outgoing.headers.add(name: "Authorization", value: authorization.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        }
        for header in request.secretHeaders {
            outgoing.headers.add(name: header.name, value: header.value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        }
        var body = request.body.withUnsafeBytes { ByteBuffer(bytes: $0) }
        defer { body.withUnsafeMutableReadableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        outgoing.body = .bytes(body)
        let tooLarge = OAuthTransportError(
            "the answer from \(target.host) was larger than \(OAuthHTTPResponse.maximumBodyBytes) bytes")
        // The answer goes straight into secure memory; the engine wipes its buffer once this returns.
        return try await engine.send(outgoing, host: target.host, port: target.port, ifTooLarge: tooLarge) { status, body in
            OAuthHTTPResponse(status: status, body: SecureBytes(copying: body))
        }
    }
}

/// Where a request goes, checked by the one endpoint rule before any connection is made.
struct ProviderTarget {
    let host: String
    let port: Int

    init(_ url: URL) throws {
        do {
            try SecureEndpoint.check(url, what: "provider endpoint")
        } catch {
            throw OAuthTransportError("the request was not sent: \(error)", requestMayHaveArrived: false)
        }
        host = url.host ?? "the provider"
        port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }
}
