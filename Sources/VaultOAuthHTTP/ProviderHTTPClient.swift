import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import VaultCore
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

/// The engine under ``HTTPClientTransport`` and ``HTTPDocumentFetcher``: one AsyncHTTPClient on the
/// process's event loops (`MultiThreadedEventLoopGroup.singleton`, the group the varlink server
/// runs on), with every rule a provider call must keep.
///
/// - **One total deadline per request** on an injected `Clock`, from the start to the last byte:
///   a provider trickling its answer cannot stretch a refresh past it.
/// - **Bounded answers:** at most `maximumBodyBytes` of body; headers are bounded by the HTTP/1.1
///   parser (80 KiB) and HTTP/2's header-list limit (16 KiB).
/// - **No redirects followed:** a 3xx is handed back as the answer, so tokens and client secrets go
///   only to the configured endpoint; the caller treats it as a failed request.
/// - **No proxy:** AsyncHTTPClient reads no `http_proxy` or `https_proxy` from the environment,
///   and none is configured, so loopback and every provider are reached directly.
/// - **TLS** from swift-nio-ssl (BoringSSL) with the system's trust roots (`/etc/ssl/certs`), plus
///   the ``ProviderTrust/additionalRoots`` a user names for a private CA; a refused certificate is
///   reported with its reason (``TLSRefusal``). HTTP/1.1 and HTTP/2 (by ALPN).
/// - Connection failures are not retried: the request fails at once with what went wrong, and
///   is known never to have left.
///
/// ```swift
/// let engine = ProviderHTTPClient(deadline: .seconds(15), deadlineText: "15 s", maximumBodyBytes: 1 << 16, clock: ContinuousClock())
/// let answer = try await engine.send(request, host: "login.example.com", port: 443, ifTooLarge: OAuthTransportError("too large")) { status, body in
///     OAuthHTTPResponse(status: status, body: SecureBytes(copying: body))
/// }
/// ```
final class ProviderHTTPClient: Sendable {
    private let client: HTTPClient
    private let deadline: Duration
    private let deadlineText: String
    private let maximumBodyBytes: Int
    private let trust: ProviderTrust
    private let clock: any Clock<Duration>

    /// - Parameters:
    ///   - deadline: the most one request may take in all, connection included.
    ///   - deadlineText: how "did not answer within …" names the deadline to the user.
    ///   - maximumBodyBytes: the most of an answer's body that is read; past it the request is cancelled.
    ///   - trust: which certificate authorities an `https` provider may be signed by.
    ///   - clock: what measures the deadline (a test may pass its own).
    init<C: Clock>(deadline: Duration, deadlineText: String, maximumBodyBytes: Int, trust: ProviderTrust = .system,
                   clock: C) where C.Duration == Duration {
        self.deadline = deadline
        self.deadlineText = deadlineText
        self.maximumBodyBytes = maximumBodyBytes
        self.trust = trust
        self.clock = clock
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: trust.tlsConfiguration(),
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: .nanoseconds(Int64(deadline / .nanoseconds(1)))),
            proxy: nil,
            ignoreUncleanSSLShutdown: false,
            decompression: .disabled)
        configuration.httpVersion = .automatic
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.idleTimeout = .seconds(30)
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration,
                            backgroundActivityLogger: Logger(label: "sortedvault.http", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    deinit {
        // The closure holds the client until its connections are closed, so it is released shut down.
        let client = client
        client.shutdown().whenComplete { _ in withExtendedLifetime(client) {} }
    }

    /// Sends `request` and returns the status and the body of the answer. The body is read into
    /// memory that `read` turns into what the caller keeps; the buffer is wiped when `read` returns.
    ///
    /// Throws `OAuthTransportError` when no answer came or the deadline passed (naming `host`, never
    /// the URL, which may carry a secret query parameter), and `ifTooLarge` when the body would pass
    /// `maximumBodyBytes`.
    func send<Answer: Sendable>(_ request: HTTPClientRequest, host: String, port: Int, ifTooLarge: any Error,
                                read: @escaping @Sendable (_ status: Int, _ body: UnsafeRawBufferPointer) -> Answer) async throws -> Answer {
        let outcome: Answer
        do {
            // The first to finish decides: an answer, or the deadline, which cancels the request.
            outcome = try await DeadlineRace.run(limit: deadline, clock: clock, {
                try await self.exchange(request, ifTooLarge: ifTooLarge, read: read)
            }, atDeadline: { [deadlineText] in
                .failure(OAuthTransportError("\(host) did not answer within \(deadlineText)"))
            })
        } catch let error as OAuthTransportError {
            throw error
        } catch where Task.isCancelled {
            throw CancellationError()
        } catch let error as any TooLargeMarker {
            throw error.wrapped
        } catch {
            throw await describe(error, host: host, port: port)
        }
        return outcome
    }

    /// One request and its answer, body included, bounded in size.
    private func exchange<Answer: Sendable>(_ request: HTTPClientRequest, ifTooLarge: any Error,
                                            read: (_ status: Int, _ body: UnsafeRawBufferPointer) -> Answer) async throws -> Answer {
        let response = try await client.execute(request, deadline: .distantFuture)
        if let length = response.headers.first(name: "content-length").flatMap(Int.init), length > maximumBodyBytes {
            throw TooLarge(wrapped: ifTooLarge)
        }
        var body = [UInt8]()
        defer { body.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        body.reserveCapacity(min(maximumBodyBytes, 16 * 1024))
        for try await var chunk in response.body {
            guard body.count + chunk.readableBytes <= maximumBodyBytes else { throw TooLarge(wrapped: ifTooLarge) }
            if body.count + chunk.readableBytes > body.capacity {
                // Grow by hand so no unwiped copy of the old storage is left behind.
                var larger = [UInt8]()
                larger.reserveCapacity(min(maximumBodyBytes, max(2 * body.capacity, body.count + chunk.readableBytes)))
                larger.append(contentsOf: body)
                body.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
                body = larger
            }
            chunk.withUnsafeMutableReadableBytes { bytes in
                body.append(contentsOf: bytes)
                bytes.initializeMemory(as: UInt8.self, repeating: 0)
            }
        }
        return body.withUnsafeBytes { read(Int(response.status.code), $0) }
    }

    /// What the user reads when no answer came: the host, what went wrong and whether the request
    /// may have reached the provider.
    private func describe(_ error: any Error, host: String, port: Int) async -> OAuthTransportError {
        if let reason = await TLSRefusal(error, host: host, port: port, trust: trust) {
            return OAuthTransportError("\(host) was refused: its TLS certificate \(reason)", requestMayHaveArrived: false)
        }
        switch error {
        case let error as HTTPClientError where error == .connectTimeout || error == .getConnectionFromPoolTimeout:
            return OAuthTransportError("\(host) did not accept a connection within \(deadlineText)", requestMayHaveArrived: false)
        case let error as NIOConnectionError:
            return OAuthTransportError("\(host) could not be reached (\(Self.text(of: error)))", requestMayHaveArrived: false)
        case let error as IOError where Self.failsBeforeSending.contains(error.errnoCode):
            return OAuthTransportError("\(host) could not be reached (\(error.description))", requestMayHaveArrived: false)
        case let error as HTTPClientError where error == .remoteConnectionClosed:
            return OAuthTransportError("\(host) closed the connection before it answered")
        case let error as HTTPClientError:
            return OAuthTransportError("\(host) could not be reached (\(error.shortDescription))")
        default:
            return OAuthTransportError("\(host) could not be reached (\(String(describing: error)))")
        }
    }

    /// Errors of a `socket()` or `connect()` that fail before a byte leaves: the provider cannot have
    /// acted. Running out of descriptors, memory or buffers is among them: counting those as lost
    /// answers would let anyone who can exhaust the daemon's descriptors end its logins.
    static let failsBeforeSending: Set<Int32> = [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, EMFILE, ENFILE, ENOBUFS, ENOMEM]

    /// The words and the "may have arrived" of a failure that is not a TLS refusal.
    static func describeForTesting(_ error: any Error, host: String) async -> OAuthTransportError {
        await ProviderHTTPClient(deadline: .seconds(1), deadlineText: "1 s", maximumBodyBytes: 1, clock: ContinuousClock())
            .describe(error, host: host, port: 443)
    }

    private static func text(of error: NIOConnectionError) -> String {
        if let refused = error.connectionErrors.first?.error { return String(describing: refused) }
        if error.dnsAAAAError != nil || error.dnsAError != nil { return "its name was not found" }
        return "no address answered"
    }
}

/// The body passed its cap: thrown inside the exchange, turned into the caller's error outside it.
private protocol TooLargeMarker: Error { var wrapped: any Error { get } }
private struct TooLarge: TooLargeMarker { let wrapped: any Error }

extension HTTPClientError {
    /// AsyncHTTPClient's own name for the failure, without the request it was part of.
    fileprivate var shortDescription: String {
        let text = String(describing: self)
        return text.hasPrefix("HTTPClientError.") ? String(text.dropFirst("HTTPClientError.".count)) : text
    }
}
