import Foundation
import VaultSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// The URLSession request for a provider request: POST, its content type, `Accept: application/json`,
    /// no caching, the `Authorization` header and the secret headers, and the secret query
    /// parameters joined to the URL. Header values leave secure memory here, as URLSession needs
    /// strings; the caller wipes the body copy.
    init(provider request: OAuthHTTPRequest, timeout: TimeInterval) {
        self.init(url: request.sendURL(), cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        httpMethod = "POST"
        setValue(request.bodyFormat.contentType, forHTTPHeaderField: "Content-Type")
        setValue("application/json", forHTTPHeaderField: "Accept")
        setValue("no-store", forHTTPHeaderField: "Cache-Control")
        if let authorization = request.authorization {
            setValue(authorization.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }, forHTTPHeaderField: "Authorization")
        }
        for header in request.secretHeaders {
            setValue(header.value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }, forHTTPHeaderField: header.name)
        }
    }
}
