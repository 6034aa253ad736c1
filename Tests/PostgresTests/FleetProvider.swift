import Foundation
import Testing
import TestSupport
import VaultCrypto
import VaultSession

/// The two kinds of provider issue 22's scenarios run against, which differ in what a refresh token
/// sent a second time gets. Both count the refresh requests made with each refresh token.
enum FleetProvider: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// django-oauth-toolkit with rotation and reuse protection: a refresh token sent again is
    /// `invalid_grant`, and its whole family is revoked.
    case strict
    /// The GoTrue stand-in with a 10 s reuse interval (hosted Supabase's): a refresh token sent again
    /// whose answer was lost gets that answer's tokens back, as GoTrue does.
    case graceful

    var testDescription: String { rawValue }

    func start() throws -> ProviderServer {
        switch self {
        case .strict: try OAuthTestProvider()
        case .graceful: try ProviderServer(.supabase, arguments: ["--reuse-interval", "10"])
        }
    }

    /// The provider settings an app saves with its login at `provider`.
    static func settings(of provider: ProviderServer) throws -> ProviderSettings {
        switch provider.kind {
        case .oauth2:
            guard let oauth = provider as? OAuthTestProvider else { throw HarnessError("not the oauth2 test provider") }
            return ProviderSettings(try oauth.provider())
        case .supabase:
            return ProviderSettings(kind: .supabase, url: provider.baseURL, apiKey: provider.apiKey.map { SecureBytes(copying: Array($0.utf8)) })
        case .firebase:
            throw HarnessError("the fleet scenarios run against oauth2 and supabase")
        }
    }
}
