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
public final class URLSessionTransport: NSObject, OAuthTransport, URLSessionDataDelegate, @unchecked Sendable {
    // Invariant: `made` and `tasks` are touched only under `lock`.
    private let timeout: TimeInterval
    private let sleep: @Sendable (Duration) async throws -> Void
    private let lock = NSLock()
    private var made: URLSession?
    private var tasks: [Int: Pending] = [:]

    private final class Pending {
        let continuation: CheckedContinuation<OAuthHTTPResponse, any Error>
        var status = 0
        var body = Data()
        var tooLarge = false
        var timedOut = false
        var watchdog: Task<Void, Never>?
        init(_ continuation: CheckedContinuation<OAuthHTTPResponse, any Error>) { self.continuation = continuation }
    }

    /// - Parameters:
    ///   - timeout: the most one request may take in all, connection included, in seconds.
    ///   - clock: what measures it; tests may pass their own `Clock` (the deadline is a real wait).
    public init<C: Clock>(timeout: TimeInterval = 15, clock: C) where C.Duration == Duration {
        self.timeout = timeout
        self.sleep = { try await clock.sleep(for: $0) }
        super.init()
    }

    /// A transport whose deadline runs on `ContinuousClock`.
    public convenience init(timeout: TimeInterval = 15) {
        self.init(timeout: timeout, clock: ContinuousClock())
    }

    deinit {
        made?.invalidateAndCancel()
    }

    /// Made on first use: a daemon whose logins never need the network never loads libcurl's state.
    private var session: URLSession {
        lock.withLock {
            if let made { return made }
            let session = Self.makeSession(timeout: timeout, delegate: self)
            made = session
            return session
        }
    }

    private static func makeSession(timeout: TimeInterval, delegate: URLSessionTransport) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    public func post(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        var urlRequest = URLRequest(provider: request, timeout: timeout)
        var body = request.body.withUnsafeBytes { Data($0) }
        defer { body.resetBytes(in: 0..<body.count) }
        urlRequest.httpBody = body
        let task = session.dataTask(with: urlRequest)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let pending = Pending(continuation)
                pending.watchdog = Task { [sleep, timeout, weak self] in
                    guard (try? await sleep(.milliseconds(Int64(timeout * 1000)))) != nil else { return }
                    self?.expire(task)
                }
                lock.withLock { tasks[task.taskIdentifier] = pending }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// The deadline passed: mark the request and cancel it (its completion reports the timeout).
    private func expire(_ task: URLSessionTask) {
        let running = lock.withLock { () -> Bool in
            guard let pending = tasks[task.taskIdentifier] else { return false }
            pending.timedOut = true
            return true
        }
        if running { task.cancel() }
    }

    // MARK: URLSessionDataDelegate

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                           completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.withLock { tasks[dataTask.taskIdentifier]?.status = (response as? HTTPURLResponse)?.statusCode ?? 0 }
        completionHandler(.allow)
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let cancel = lock.withLock { () -> Bool in
            guard let pending = tasks[dataTask.taskIdentifier] else { return false }
            guard pending.body.count + data.count <= OAuthHTTPResponse.maximumBodyBytes else {
                pending.tooLarge = true
                return true
            }
            pending.body.append(data)
            return false
        }
        if cancel { dataTask.cancel() }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)  // answer with the redirect itself; never resend credentials elsewhere
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let pending = lock.withLock({ tasks.removeValue(forKey: task.taskIdentifier) }) else { return }
        defer { pending.body.resetBytes(in: 0..<pending.body.count) }
        pending.watchdog?.cancel()
        if pending.timedOut {
            pending.continuation.resume(throwing: OAuthTransportError(
                "\(task.originalRequest?.url?.host ?? "the provider") did not answer within \(Int(timeout)) s"))
        } else if pending.tooLarge {
            pending.continuation.resume(throwing: OAuthTransportError(
                "the answer from \(task.originalRequest?.url?.host ?? "the provider") was larger than \(OAuthHTTPResponse.maximumBodyBytes) bytes"))
        } else if let error {
            let nsError = error as NSError
            let what = nsError.code == NSURLErrorTimedOut ? "did not answer within \(Int(timeout)) s" : "could not be reached (\(nsError.localizedDescription))"
            pending.continuation.resume(throwing: OAuthTransportError("\(task.originalRequest?.url?.host ?? "the provider") \(what)"))
        } else {
            pending.continuation.resume(returning: OAuthHTTPResponse(status: pending.status, body: SecureBytes(copying: pending.body)))
        }
    }
}
