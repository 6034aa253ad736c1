import FoundationEssentials
import Varlink
import VaultAPI
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession

/// `Restore`: a login from a backup, put back through the session manager as a new login.
extension SessionService {
    func restore(_ request: SessionInterface.Restore.Request, call: DaemonCall) throws -> Answer<SessionInterface.Restore.Reply> {
        let key = try VaultInterface.ItemName(service: request.login.service, account: request.login.account).key()
        let session = try LoginSession(backup: request.login)
        let replace = request.replace == true
        return .later {
            let outcome = try await self.sessions.restore(session, for: key, replace: replace)
            return SessionInterface.Restore.Reply(outcome: SessionInterface.RestoreOutcome(outcome))
        }
    }
}

extension SessionInterface.RestoreOutcome {
    init(_ outcome: LoginRestoreOutcome) {
        switch outcome {
        case .restored: self = .restored
        case .same: self = .same
        case .kept: self = .kept
        case .ended: self = .ended
        }
    }
}

extension LoginSession {
    /// A backup's login, checked by the rules a stored record is (the provider's kind and
    /// endpoints: https, or http to loopback only), with a new login id.
    init(backup login: SessionInterface.BackupLogin) throws {
        func url(_ text: String?, _ parameter: String) throws -> URL? {
            guard let text else { return nil }
            guard let url = URL(string: text) else { throw VaultError.invalidArgument("the login's \(parameter) is not a URL") }
            return url
        }
        let wire = login.provider
        guard let kind = ProviderKind(rawValue: wire.kind ?? ProviderKind.oauth2.rawValue) else {
            throw VaultError.invalidArgument("the login's provider kind \((wire.kind ?? "").debugDescription) is not one this sortedvault knows; update it")
        }
        guard let tokenEndpoint = try url(wire.tokenEndpoint, "token endpoint") else {
            throw VaultError.invalidArgument("the login has no token endpoint")
        }
        guard let authentication = OAuthProvider.ClientAuthentication(rawValue: wire.clientAuthentication ?? "basic") else {
            throw VaultError.invalidArgument("the login's client authentication must be \"basic\" or \"post\"")
        }
        let provider = try OAuthProvider(kind: kind, tokenEndpoint: tokenEndpoint,
                                         revocationEndpoint: try url(wire.revocationEndpoint, "revocation endpoint"),
                                         clientID: wire.clientId ?? "", clientSecret: wire.clientSecret,
                                         clientAuthentication: authentication, apiKey: wire.apiKey,
                                         issuer: try url(wire.issuer, "issuer"))
        func date(_ seconds: Double?) -> Date? { seconds.map(Date.init(timeIntervalSince1970:)) }
        self.init(accessToken: login.accessToken, refreshToken: login.refreshToken, idToken: login.idToken,
                  tokenType: login.tokenType, scopes: login.scopes,
                  accessTokenExpiresAt: date(login.accessTokenExpiresAt), refreshTokenExpiresAt: date(login.refreshTokenExpiresAt),
                  absoluteExpiresAt: date(login.absoluteExpiresAt), issuedAt: Date(timeIntervalSince1970: login.issuedAt),
                  signedInAt: Date(timeIntervalSince1970: login.signedInAt), lastRefreshedAt: date(login.lastRefreshedAt),
                  userID: login.userId, provider: provider, loginID: [])
    }
}
