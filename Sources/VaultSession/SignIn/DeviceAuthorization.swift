import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import BoundedJSON
import VaultCore
import VaultCrypto

/// A provider's answer to a device authorization request (RFC 8628 §3.2): the code the manager
/// polls with (kept in secure memory, never returned) and what the user needs to approve it.
struct DeviceAuthorization: Sendable {
    /// The longest a device code may live, and the longest poll interval taken from a provider.
    static let maximumLifetime: TimeInterval = 3600
    static let maximumInterval: TimeInterval = 300
    /// RFC 8628 §3.2: "If no value is provided, clients MUST use 5 as the default."
    static let defaultInterval: TimeInterval = 5

    let deviceCode: SecureBytes
    let userCode: String
    let verificationURI: URL
    let verificationURIComplete: URL?
    let expiresIn: TimeInterval
    let interval: TimeInterval

    /// Reads the JSON answer, bounded; errors name the member, never its value.
    init(json body: SecureBytes) throws {
        var code: Result<SecureBytes, VaultError>?
        let parsed = body.withUnsafeBytes { raw in
            Result { try JSONValue.parse(raw, maxDepth: 8, divertingStringsAt: ["device_code"]) { _, text in
                code = Result { () throws(VaultError) -> SecureBytes in try TokenResponse.token(raw: text, field: "device_code") }
            } }
        }
        guard case .success(let value) = parsed, let object = value.objectValue else {
            throw VaultError.invalidArgument("the device authorization answer is not a JSON object")
        }
        guard let code else { throw VaultError.invalidArgument("the device authorization answer has no device_code string") }
        deviceCode = try code.get()
        guard let user = object["user_code"]?.stringValue, !user.isEmpty, user.utf8.count <= 128,
              user.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw VaultError.invalidArgument("the device authorization answer needs a user_code of 1 to 128 printable characters")
        }
        userCode = user
        verificationURI = try Self.url(object["verification_uri"], member: "verification_uri")
        verificationURIComplete = object["verification_uri_complete"] == nil
            ? nil : try Self.url(object["verification_uri_complete"], member: "verification_uri_complete")
        guard let expires = try TokenResponse.seconds(object["expires_in"], field: "expires_in"), expires >= 1 else {
            throw VaultError.invalidArgument("the device authorization answer needs expires_in (seconds)")
        }
        expiresIn = min(expires, Self.maximumLifetime)
        let asked = try TokenResponse.seconds(object["interval"], field: "interval") ?? Self.defaultInterval
        interval = min(max(asked, 1), Self.maximumInterval)
    }

    /// A page the user opens: https, or http to a loopback address, as every endpoint.
    private static func url(_ value: JSONValue?, member: String) throws -> URL {
        guard let text = value?.stringValue, text.utf8.count <= 2048, let url = URL(string: text) else {
            throw VaultError.invalidArgument("the device authorization answer needs \(member) as a URL")
        }
        try SecureEndpoint.check(url, what: member)
        return url
    }
}

/// What the device authorization request came to.
enum DeviceAuthorizationAnswer: ProviderAnswer {
    case authorization(DeviceAuthorization)
    case transient(String)
    case rejected(error: String, description: String?)

    static func noAnswer(_ reason: String, mayHaveArrived: Bool) -> Self { .transient(reason) }
}

extension OAuthClient {
    /// Asks for a device code (RFC 8628 §3.1), authenticated as every token request is.
    func authorizeDevice(at endpoint: URL, scopes: [String], provider: OAuthProvider) async -> DeviceAuthorizationAnswer {
        var form = FormBody()
        if !scopes.isEmpty { form.add("scope", scopes.joined(separator: " ")) }
        let text = ProviderErrorText(sent: [provider.clientSecret].compactMap { $0 })
        return await post(authenticated(form, to: endpoint, provider: provider)) { response in
            switch response.status {
            case 200:
                do {
                    return .authorization(try DeviceAuthorization(json: response.body))
                } catch {
                    return .rejected(error: "invalid_response", description: (error as? VaultError)?.reason)
                }
            case 408, 429, 500...599:
                return .transient("the provider answered HTTP \(response.status)")
            default:
                let error = Self.errorCode(response.body, text: text)
                return .rejected(error: error?.code ?? "http_\(response.status)", description: error?.description)
            }
        }
    }

    /// One poll of the token endpoint for a device sign-in (RFC 8628 §3.4). The answer reads as a
    /// refresh answer does; `authorization_pending`, `slow_down`, `expired_token` and
    /// `access_denied` arrive as `.rejected`.
    func pollDevice(_ deviceCode: SecureBytes, provider: OAuthProvider) async -> RefreshAnswer {
        var form = FormBody()
        form.add("grant_type", "urn:ietf:params:oauth:grant-type:device_code")
        form.add("device_code", secret: deviceCode)
        let text = ProviderErrorText(sent: [deviceCode] + [provider.clientSecret].compactMap { $0 })
        return await post(authenticated(form, to: provider.tokenEndpoint, provider: provider)) {
            Self.refreshAnswer($0, text: text)
        }
    }
}
