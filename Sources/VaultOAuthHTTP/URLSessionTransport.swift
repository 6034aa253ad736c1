import Foundation
import VaultCrypto
import VaultSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real ``OAuthTransport``: Foundation's URLSession (libcurl on Linux), ephemeral — no cookies,
/// no cache, no credential store — with a wall-clock deadline per request and a bounded answer
/// size, and redirects refused so tokens and client credentials go only to the configured endpoint.
///
/// The deadline is total, from the request's start to its last byte: URLSession's own timeouts
/// count only the time between bytes (on Linux the resource timeout is not enforced either), so a
/// provider sending one byte every 2 s would otherwise hold a refresh open without end. When the
/// deadline passes, the request is cancelled and fails as "did not answer". Cancelling the calling
/// Swift task cancels the request too.
///
/// ```swift
/// let sessions = SessionManager(store: vault, transport: URLSessionTransport(), clock: SystemClock())
/// ```
///
/// Request bodies are copied out of secure memory into the `Data` URLSession needs; that copy is
/// wiped when the request is done, but copies libcurl makes are out of reach.
public final class URLSessionTransport: NSObject, OAuthTransport, @unchecked Sendable {
    // Invariant: only constants here; the engine guards its own state with its lock.
    private let timeout: TimeInterval
    private let engine: BoundedHTTPSession

    /// The deadline of a transport made without one, as the daemon makes its own, in seconds.
    public static let defaultTimeout: TimeInterval = 15

    /// - Parameters:
    ///   - timeout: the most one request may take in all, connection included, in seconds.
    ///   - clock: what measures it; tests may pass their own `Clock` (the deadline is a real wait).
    public init<C: Clock>(timeout: TimeInterval = defaultTimeout, clock: C) where C.Duration == Duration {
        self.timeout = timeout
        // The session inside is made on first use: a daemon whose logins never need the network never loads libcurl's state.
        self.engine = BoundedHTTPSession(deadline: .milliseconds(Int64(timeout * 1000)), deadlineText: "\(Int(timeout)) s",
                                         maximumBodyBytes: OAuthHTTPResponse.maximumBodyBytes, clock: clock)
        super.init()
    }

    /// A transport whose deadline runs on `ContinuousClock`.
    public convenience init(timeout: TimeInterval = defaultTimeout) {
        self.init(timeout: timeout, clock: ContinuousClock())
    }

    public var requestDeadline: TimeInterval { timeout }

    public func post(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        var urlRequest = URLRequest(provider: request, timeout: timeout)
        var body = request.body.withUnsafeBytes { Data($0) }
        defer { body.resetBytes(in: 0..<body.count) }
        urlRequest.httpBody = body
        let tooLarge = OAuthTransportError(
            "the answer from \(urlRequest.url?.host ?? "the provider") was larger than \(OAuthHTTPResponse.maximumBodyBytes) bytes")
        // The answer goes straight into secure memory; the engine wipes its buffer once this returns.
        return try await engine.send(urlRequest, ifTooLarge: tooLarge) { status, body in
            OAuthHTTPResponse(status: status, body: SecureBytes(copying: body))
        }
    }
}
