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
    // Invariant: `made` and `tasks` are touched only under `lock`.
    private let deadline: Duration
    private let deadlineText: String
    private let maximumBodyBytes: Int
    private let sleep: @Sendable (Duration) async throws -> Void
    private let lock = NSLock()
    private var made: URLSession?
    private var tasks: [Int: Pending] = [:]

    private final class Pending {
        let ifTooLarge: any Error
        let deliver: (_ status: Int, _ body: Data) -> Void
        let fail: (any Error) -> Void
        var status = 0
        var body = Data()
        var tooLarge = false
        var pastDeadline = false
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
                lock.withLock { tasks[task.taskIdentifier] = pending }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// The deadline passed: mark the request and cancel it (its completion reports the deadline).
    private func expire(_ task: URLSessionTask) {
        let running = lock.withLock { () -> Bool in
            guard let pending = tasks[task.taskIdentifier] else { return false }
            pending.pastDeadline = true
            return true
        }
        if running { task.cancel() }
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

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let pending = lock.withLock({ tasks.removeValue(forKey: task.taskIdentifier) }) else { return }
        defer { pending.body.resetBytes(in: 0..<pending.body.count) }
        pending.watchdog?.cancel()
        let host = task.originalRequest?.url?.host ?? "the provider"
        if pending.tooLarge {
            pending.fail(pending.ifTooLarge)
        } else if pending.pastDeadline || (error as NSError?)?.code == NSURLErrorTimedOut {
            pending.fail(OAuthTransportError("\(host) did not answer within \(deadlineText)"))
        } else if let error {
            pending.fail(OAuthTransportError("\(host) could not be reached (\((error as NSError).localizedDescription))",
                                             requestMayHaveArrived: !Self.neverSent(error)))
        } else {
            pending.deliver(pending.status, pending.body)
        }
    }
}
