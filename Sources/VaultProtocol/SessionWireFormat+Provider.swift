import Foundation
import Varlink
import VaultCore
import VaultCrypto
import VaultSession

/// The `Provider` parameter of Save, both ways. Secrets (client secret, API key) leave secure
/// memory only for the wire and go back into it when read.
extension SessionWireFormat {
    public static func encode(_ settings: ProviderSettings) -> JSONValue {
        var object: [String: JSONValue] = ["kind": .string(settings.kind.rawValue)]
        object["tokenEndpoint"] = settings.tokenEndpoint.map { .string($0.absoluteString) }
        object["revocationEndpoint"] = settings.revocationEndpoint.map { .string($0.absoluteString) }
        object["clientId"] = settings.clientID.map { .string($0) }
        if settings.kind == .oauth2 || settings.kind == .oidc {
            object["clientAuthentication"] = .string(settings.clientAuthentication.rawValue)
        }
        object["clientSecret"] = settings.clientSecret.map(secretString)
        object["issuer"] = settings.issuer.map { .string($0.absoluteString) }
        object["url"] = settings.url.map { .string($0.absoluteString) }
        object["apiKey"] = settings.apiKey.map(secretString)
        return .object(object)
    }

    public static func encode(_ provider: OAuthProvider) -> JSONValue {
        encode(ProviderSettings(provider))
    }

    public static func decodeProviderSettings(_ value: JSONValue?) throws -> ProviderSettings {
        guard let object = value?.objectValue else { throw VaultError.invalidArgument("provider must be an object") }
        func url(_ field: String) throws -> URL? {
            guard let text = object[field]?.stringValue else { return nil }
            guard let url = URL(string: text) else { throw VaultError.invalidArgument("provider.\(field) is not a URL") }
            return url
        }
        func secret(_ field: String) throws -> SecureBytes? {
            guard let text = object[field]?.stringValue else { return nil }
            guard !text.isEmpty, text.utf8.count <= 4096 else { throw VaultError.invalidArgument("provider.\(field) must be 1 to 4096 bytes") }
            return SecureBytes(copying: text.utf8)
        }
        var settings = ProviderSettings()
        if let text = object["kind"]?.stringValue {
            guard let kind = ProviderKind(rawValue: text) else {
                throw VaultError.invalidArgument("provider.kind must be one of \(ProviderKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            settings.kind = kind
        }
        if let text = object["clientAuthentication"]?.stringValue {
            guard let parsed = OAuthProvider.ClientAuthentication(rawValue: text) else {
                throw VaultError.invalidArgument("provider.clientAuthentication must be \"basic\" or \"post\"")
            }
            settings.clientAuthentication = parsed
        }
        settings.tokenEndpoint = try url("tokenEndpoint")
        settings.revocationEndpoint = try url("revocationEndpoint")
        settings.clientID = object["clientId"]?.stringValue
        settings.clientSecret = try secret("clientSecret")
        settings.issuer = try url("issuer")
        settings.url = try url("url")
        settings.apiKey = try secret("apiKey")
        return settings
    }

    /// The provider of a Save for every kind but `oidc` (whose endpoints the daemon discovers).
    public static func decodeProvider(_ value: JSONValue?) throws -> OAuthProvider {
        try decodeProviderSettings(value).resolved()
    }

    private static func secretString(_ secret: SecureBytes) -> JSONValue {
        .string(secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
    }
}
