import Foundation
import VaultCore
import VaultOIDC
import VaultSession

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
public final class URLSessionDocumentFetcher: NSObject, OIDCDocumentFetcher, URLSessionDataDelegate, @unchecked Sendable {
    // Invariant: `made` and `tasks` are touched only under `lock`.
    private let deadline: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let lock = NSLock()
    private var made: URLSession?
    private var tasks: [Int: Pending] = [:]

    private final class Pending {
        let continuation: CheckedContinuation<(status: Int, body: [UInt8]), any Error>
        var status = 0
        var body: [UInt8] = []
        var tooLarge = false
        var pastDeadline = false
        init(_ continuation: CheckedContinuation<(status: Int, body: [UInt8]), any Error>) { self.continuation = continuation }
    }

    /// - Parameters:
    ///   - deadline: the most one fetch may take, from the first byte sent to the last one read.
    ///   - clock: what measures the deadline (a test may pass its own).
    public init<C: Clock>(deadline: Duration = .seconds(10), clock: C = ContinuousClock()) where C.Duration == Duration {
        self.deadline = deadline
        self.sleep = { try await clock.sleep(for: $0) }
        super.init()
    }

    deinit {
        made?.invalidateAndCancel()
    }

    /// Made on first use, like `URLSessionTransport`'s.
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

    public func fetch(_ url: URL) async throws -> (status: Int, body: [UInt8]) {
        do {
            try SecureEndpoint.check(url, what: "OpenID Connect document URL")
        } catch {
            throw OIDCError(.malformedDocument, "\(error)")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        request.httpMethod = "GET"
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let task = session.dataTask(with: request)
        return try await withThrowingTaskGroup(of: (status: Int, body: [UInt8])?.self) { group in
            group.addTask {
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        self.lock.withLock { self.tasks[task.taskIdentifier] = Pending(continuation) }
                        task.resume()
                    }
                } onCancel: {
                    task.cancel()
                }
            }
            group.addTask {
                do { try await self.sleep(self.deadline) } catch { return nil }  // cancelled: the answer came first
                self.lock.withLock { self.tasks[task.taskIdentifier]?.pastDeadline = true }
                task.cancel()
                return nil
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let answer = result { return answer }
            }
            throw OAuthTransportError("the fetch was cancelled")
        }
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
            guard pending.body.count + data.count <= OIDCProviderCache.maximumDocumentBytes else {
                pending.tooLarge = true
                return true
            }
            pending.body.append(contentsOf: data)
            return false
        }
        if cancel { dataTask.cancel() }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)  // answer with the redirect itself: documents come only from the configured place
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let pending = lock.withLock({ tasks.removeValue(forKey: task.taskIdentifier) }) else { return }
        let url = task.originalRequest?.url
        let host = url?.host ?? "the provider"
        if pending.tooLarge, let url {
            pending.continuation.resume(throwing: OIDCError.documentTooLarge(url, limit: OIDCProviderCache.maximumDocumentBytes))
        } else if pending.pastDeadline || (error as NSError?)?.code == NSURLErrorTimedOut {
            pending.continuation.resume(throwing: OAuthTransportError("\(host) did not answer within \(deadline)"))
        } else if let error {
            pending.continuation.resume(throwing: OAuthTransportError("\(host) could not be reached (\((error as NSError).localizedDescription))"))
        } else {
            pending.continuation.resume(returning: (pending.status, pending.body))
        }
    }
}
