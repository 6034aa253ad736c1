import Foundation
import VaultSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession engine under ``URLSessionTransport`` and ``URLSessionDocumentFetcher``: an
/// ephemeral session (no cookies, cache or credential store) made on first use, redirects refused,
/// a cap on the answer's size, and one wall-clock deadline per request measured on an injected `Clock`.
///
/// The deadline is total, from the request's start to its last byte: URLSession's own timeouts count
/// only the time between bytes (on Linux the resource timeout is not enforced either), so a watchdog
/// sleeps on the clock and cancels the task when the deadline passes. Cancelling the calling Swift
/// task cancels the request too.
///
/// ```swift
/// let engine = BoundedHTTPSession(deadline: .seconds(10), deadlineText: "10 s", maximumBodyBytes: 1 << 16, clock: ContinuousClock())
/// let answer = try await engine.send(request, ifTooLarge: OAuthTransportError("too large")) { status, body in (status, Array(body)) }
/// ```
///
/// The answer body is lent to `read` and wiped when `read` returns: a caller that copies it into
/// `SecureBytes` leaves no plain copy of ours behind (copies libcurl makes are out of reach). Throws
/// `OAuthTransportError` when no answer came or the deadline passed, and `ifTooLarge` when the body
/// would pass `maximumBodyBytes`.
final class BoundedHTTPSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Invariant: `made`, `tasks` and `cancelledEarly` are touched only under `lock`.
    private let deadline: Duration
    private let deadlineText: String
    private let maximumBodyBytes: Int
    private let sleep: @Sendable (Duration) async throws -> Void
    private let lock = NSLock()
    private var made: URLSession?
    private var tasks: [Int: Pending] = [:]
    /// Tasks whose caller was cancelled before their request was registered in ``tasks``.
    private var cancelledEarly: Set<Int> = []

    private final class Pending {
        let ifTooLarge: any Error
        let deliver: (_ status: Int, _ body: Data) -> Void
        let fail: (any Error) -> Void
        var status = 0
        var body = Data()
        var tooLarge = false
        var watchdog: Task<Void, Never>?
        init(ifTooLarge: any Error, deliver: @escaping (Int, Data) -> Void, fail: @escaping (any Error) -> Void) {
            self.ifTooLarge = ifTooLarge
            self.deliver = deliver
            self.fail = fail
        }
    }

    /// - Parameters:
    ///   - deadline: the most one request may take in all, connection included.
    ///   - deadlineText: how "did not answer within …" names the deadline to the user.
    ///   - maximumBodyBytes: the most of an answer's body that is read; past it the request is cancelled.
    ///   - clock: what measures the deadline (a test may pass its own).
    init<C: Clock>(deadline: Duration, deadlineText: String, maximumBodyBytes: Int, clock: C) where C.Duration == Duration {
        self.deadline = deadline
        self.deadlineText = deadlineText
        self.maximumBodyBytes = maximumBodyBytes
        self.sleep = { try await clock.sleep(for: $0) }
        super.init()
    }

    deinit {
        made?.invalidateAndCancel()
    }

    /// Made on first use: a daemon whose logins never need the network never loads libcurl's state.
    private var session: URLSession {
        lock.withLock {
            if let made { return made }
            let configuration = URLSessionConfiguration.ephemeral
            let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
            configuration.timeoutIntervalForRequest = seconds
            configuration.timeoutIntervalForResource = seconds
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            configuration.urlCredentialStorage = nil
            configuration.httpShouldSetCookies = false
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            made = session
            return session
        }
    }

    /// Sends `request` and hands the status and body of the answer to `read`, whose result is returned.
    ///
    /// The caller's cancellation and the deadline end the wait themselves: the request is failed here
    /// at once, then the URLSession task is cancelled. Foundation does not always report a task
    /// cancelled early (before `resume()` has started it, say) as completed, and a wait that trusts it
    /// to kept a daemon past SIGTERM.
    func send<Answer: Sendable>(_ request: URLRequest, ifTooLarge: any Error,
                                read: @escaping @Sendable (_ status: Int, _ body: Data) -> Answer) async throws -> Answer {
        let task = session.dataTask(with: request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Answer, any Error>) in
                let pending = Pending(ifTooLarge: ifTooLarge,
                                      deliver: { continuation.resume(returning: read($0, $1)) },
                                      fail: { continuation.resume(throwing: $0) })
                pending.watchdog = Task { [sleep, deadline, weak self] in
                    guard (try? await sleep(deadline)) != nil else { return }  // cancelled: the answer came first
                    self?.expire(task)
                }
                let cancelledAlready = lock.withLock { () -> Bool in
                    if cancelledEarly.remove(task.taskIdentifier) != nil { return true }
                    tasks[task.taskIdentifier] = pending
                    return false
                }
                if cancelledAlready {
                    pending.watchdog?.cancel()
                    pending.fail(CancellationError())
                } else {
                    task.resume()
                }
            }
        } onCancel: {
            let pending = lock.withLock { () -> Pending? in
                guard let pending = tasks.removeValue(forKey: task.taskIdentifier) else {
                    cancelledEarly.insert(task.taskIdentifier)
                    return nil
                }
                return pending
            }
            task.cancel()
            if let pending {
                pending.watchdog?.cancel()
                pending.body.resetBytes(in: 0..<pending.body.count)
                pending.fail(CancellationError())
            }
        }
    }

    /// The deadline passed: fail the request now and cancel it.
    private func expire(_ task: URLSessionTask) {
        guard let pending = lock.withLock({ tasks.removeValue(forKey: task.taskIdentifier) }) else { return }
        task.cancel()
        pending.body.resetBytes(in: 0..<pending.body.count)
        let host = task.originalRequest?.url?.host ?? "the provider"
        pending.fail(OAuthTransportError("\(host) did not answer within \(deadlineText)", requestMayHaveArrived: Self.bodyLeft(task)))
    }

    // MARK: URLSessionDataDelegate

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.withLock { tasks[dataTask.taskIdentifier]?.status = (response as? HTTPURLResponse)?.statusCode ?? 0 }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let cancel = lock.withLock { () -> Bool in
            guard let pending = tasks[dataTask.taskIdentifier] else { return false }
            guard pending.body.count + data.count <= maximumBodyBytes else {
                pending.tooLarge = true
                return true
            }
            pending.body.append(data)
            return false
        }
        if cancel { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)  // answer with the redirect itself: never resend credentials, never fetch from elsewhere
    }

    /// Failures that happen before a byte of the request leaves: the provider cannot have acted on it.
    static func neverSent(_ error: any Error) -> Bool {
        [NSURLErrorCannotFindHost, NSURLErrorCannotConnectToHost, NSURLErrorDNSLookupFailed,
         NSURLErrorNotConnectedToInternet, NSURLErrorUnsupportedURL, NSURLErrorBadURL,
         NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted,
         NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid,
         NSURLErrorServerCertificateHasUnknownRoot].contains((error as NSError).code)
    }

    /// Whether any of `task`'s body was handed to libcurl to send. Foundation counts body bytes as
    /// libcurl asks for them, which it does only on a connected socket; a request whose body never
    /// left cannot have been acted on (every request sent here has a body with its `Content-Length`).
    /// A request without a body is counted as sent. This is what keeps local failures (`EMFILE`
    /// from `socket()`, a CA file that cannot be opened, a deadline passing while connecting) from
    /// being taken for lost answers, which end logins (docs/sessions-core.md, "Refresh lease").
    static func bodyLeft(_ task: URLSessionTask) -> Bool {
        task.countOfBytesSent > 0 || (task.originalRequest?.httpBody?.isEmpty ?? true)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let pending = lock.withLock({ tasks.removeValue(forKey: task.taskIdentifier) }) else { return }
        defer { pending.body.resetBytes(in: 0..<pending.body.count) }
        pending.watchdog?.cancel()
        let host = task.originalRequest?.url?.host ?? "the provider"
        let bodyLeft = Self.bodyLeft(task)
        if pending.tooLarge {
            pending.fail(pending.ifTooLarge)
        } else if (error as NSError?)?.code == NSURLErrorTimedOut {
            pending.fail(OAuthTransportError("\(host) did not answer within \(deadlineText)", requestMayHaveArrived: bodyLeft))
        } else if let error {
            pending.fail(OAuthTransportError("\(host) could not be reached (\((error as NSError).localizedDescription))",
                                             requestMayHaveArrived: bodyLeft && !Self.neverSent(error)))
        } else {
            pending.deliver(pending.status, pending.body)
        }
    }
}
