import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An outcome that can say "the provider did not answer; try again later".
protocol ProviderAnswer: Sendable {
    /// No HTTP answer came back; `mayHaveArrived` when the request may have reached the provider.
    static func noAnswer(_ reason: String, mayHaveArrived: Bool) -> Self
}

extension RefreshAnswer: ProviderAnswer {
    static func noAnswer(_ reason: String, mayHaveArrived: Bool) -> Self {
        mayHaveArrived ? .lost(reason) : .transient(reason)
    }
}

extension RevocationAnswer: ProviderAnswer {
    static func noAnswer(_ reason: String, mayHaveArrived: Bool) -> Self { .transient(reason) }
}

extension OAuthClient {
    /// Sends `request` and maps the provider's answer with `read`.
    ///
    /// ```swift
    /// return await post(request, read: Self.revocationAnswer)
    /// ```
    ///
    /// When no HTTP answer came back at all (``OAuthTransportError``, or any other thrown error), the
    /// outcome is `.noAnswer`: the provider may be back later, so nothing is deleted. `read` sees
    /// every answer that did come, whatever its status.
    func post<Answer: ProviderAnswer>(_ request: OAuthHTTPRequest, read: (OAuthHTTPResponse) -> Answer) async -> Answer {
        let response: OAuthHTTPResponse
        do {
            response = try await transport.post(request)
        } catch {
            return .noAnswer("the provider did not answer: \(error)", mayHaveArrived: Self.requestMayHaveArrived(despite: error))
        }
        return read(response)
    }

    /// Whether a request that failed with `error` may have reached the provider. A transport says so
    /// itself (``OAuthTransportError/requestMayHaveArrived``). Any other error is taken as "may have
    /// arrived" (the safe side), except this host running out of descriptors, memory or buffers:
    /// those fail a `socket()` or `open()` before a byte leaves, and counting them as lost answers
    /// would let anyone who can exhaust the daemon's descriptors end its logins.
    static func requestMayHaveArrived(despite error: any Error) -> Bool {
        if let transport = error as? OAuthTransportError { return transport.requestMayHaveArrived }
        guard let code = (error as? POSIXError)?.code.rawValue else { return true }
        return ![EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code)
    }
}
