import Foundation

/// An outcome that can say "the provider did not answer; try again later".
protocol ProviderAnswer: Sendable {
    static func transient(_ reason: String) -> Self
}

extension RefreshAnswer: ProviderAnswer {}
extension RevocationAnswer: ProviderAnswer {}

extension OAuthClient {
    /// Sends `request` and maps the provider's answer with `read`.
    ///
    /// ```swift
    /// return await post(request, read: Self.revocationAnswer)
    /// ```
    ///
    /// When no HTTP answer came back at all (``OAuthTransportError``, or any other thrown error), the
    /// outcome is `.transient`: the provider may be back later, so nothing is deleted. `read` sees
    /// every answer that did come, whatever its status.
    func post<Answer: ProviderAnswer>(_ request: OAuthHTTPRequest, read: (OAuthHTTPResponse) -> Answer) async -> Answer {
        let response: OAuthHTTPResponse
        do {
            response = try await transport.post(request)
        } catch {
            return .transient("the provider did not answer: \(error)")
        }
        return read(response)
    }
}
