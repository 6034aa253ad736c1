import Foundation

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
            let mayHaveArrived = (error as? OAuthTransportError)?.requestMayHaveArrived ?? true
            return .noAnswer("the provider did not answer: \(error)", mayHaveArrived: mayHaveArrived)
        }
        return read(response)
    }
}
