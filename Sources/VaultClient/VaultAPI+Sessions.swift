import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession

/// VaultAPI's session types (seconds, text URLs) and VaultSession's (`Date`, `URL`, enums): the one
/// place they convert. Tokens and provider secrets stay `SecureBytes` both ways.
extension SessionInterface.Grant {
    public init(_ grant: AccessGrant) {
        self.init(accessToken: grant.accessToken, tokenType: grant.tokenType, expiresAt: grant.expiresAt.timeIntervalSince1970,
                  scopes: grant.scopes)
    }
}

extension AccessGrant {
    public init(wire grant: SessionInterface.Grant) {
        self.init(accessToken: grant.accessToken, tokenType: grant.tokenType, expiresAt: Date(timeIntervalSince1970: grant.expiresAt),
                  scopes: grant.scopes)
    }
}

extension SessionInterface.LoginOutcome {
    public init(_ result: AutoLoginResult) {
        var reason: String?
        let outcome: SessionInterface.Outcome
        switch result {
        case .reauthRequired(let why): (outcome, reason) = (.reauthRequired, why.rawValue)
        case .offline(_, let why): (outcome, reason) = (.offline, why)
        case .valid: outcome = .valid
        case .refreshed: outcome = .refreshed
        }
        self.init(outcome: outcome, grant: result.grant.map(SessionInterface.Grant.init), reason: reason)
    }
}

extension AutoLoginResult {
    /// The daemon's answer; an outcome that needs a grant and has none is a malformed reply.
    public init(wire reply: SessionInterface.LoginOutcome) throws {
        let grant = reply.grant.map(AccessGrant.init(wire:))
        switch reply.outcome {
        case .valid:
            guard let grant else { throw SessionWireError.malformed("AutoLogin") }
            self = .valid(grant)
        case .refreshed:
            guard let grant else { throw SessionWireError.malformed("AutoLogin") }
            self = .refreshed(grant)
        case .reauthRequired:
            self = .reauthRequired(ReauthReason(rawValue: reply.reason ?? "") ?? .noSession)
        case .offline:
            self = .offline(grant, reason: reply.reason ?? "")
        }
    }
}

extension SessionInterface.SessionState {
    public init(_ status: SessionStatus) {
        self.init(state: status.state, providerKind: status.providerKind, tokenType: status.tokenType, scopes: status.scopes,
                  accessTokenExpiresAt: status.accessTokenExpiresAt.timeIntervalSince1970,
                  refreshTokenExpiresAt: status.refreshTokenExpiresAt?.timeIntervalSince1970,
                  absoluteExpiresAt: status.absoluteExpiresAt?.timeIntervalSince1970, hasRefreshToken: status.hasRefreshToken,
                  hasIdToken: status.hasIDToken, issuedAt: status.issuedAt.timeIntervalSince1970,
                  signedInAt: status.signedInAt.timeIntervalSince1970, lastRefreshedAt: status.lastRefreshedAt?.timeIntervalSince1970,
                  userId: status.userID, tokenEndpoint: status.tokenEndpoint, revocationEndpoint: status.revocationEndpoint,
                  clientId: status.clientID, clientAuthentication: status.clientAuthentication, hasClientSecret: status.hasClientSecret,
                  retryNotBefore: status.retryNotBefore?.timeIntervalSince1970)
    }
}

extension SessionStatus {
    public init(wire state: SessionInterface.SessionState) {
        func date(_ seconds: Double?) -> Date? { seconds.map(Date.init(timeIntervalSince1970:)) }
        self.init(state: state.state, providerKind: state.providerKind, tokenType: state.tokenType, scopes: state.scopes,
                  accessTokenExpiresAt: Date(timeIntervalSince1970: state.accessTokenExpiresAt),
                  refreshTokenExpiresAt: date(state.refreshTokenExpiresAt), absoluteExpiresAt: date(state.absoluteExpiresAt),
                  hasRefreshToken: state.hasRefreshToken, hasIDToken: state.hasIdToken,
                  issuedAt: Date(timeIntervalSince1970: state.issuedAt), signedInAt: Date(timeIntervalSince1970: state.signedInAt),
                  lastRefreshedAt: date(state.lastRefreshedAt), userID: state.userId, tokenEndpoint: state.tokenEndpoint,
                  revocationEndpoint: state.revocationEndpoint, clientID: state.clientId,
                  clientAuthentication: state.clientAuthentication, hasClientSecret: state.hasClientSecret,
                  retryNotBefore: date(state.retryNotBefore))
    }
}

extension SessionInterface.Login {
    public init(_ entry: SessionListEntry) {
        self.init(service: entry.service, account: entry.account, providerKind: entry.providerKind, userId: entry.userID,
                  state: entry.state, accessTokenExpiresAt: entry.accessTokenExpiresAt.timeIntervalSince1970,
                  refreshTokenExpiresAt: entry.refreshTokenExpiresAt?.timeIntervalSince1970,
                  absoluteExpiresAt: entry.absoluteExpiresAt?.timeIntervalSince1970, hasRefreshToken: entry.hasRefreshToken)
    }
}

extension SessionListEntry {
    public init(wire login: SessionInterface.Login) {
        self.init(service: login.service, account: login.account, providerKind: login.providerKind, userID: login.userId,
                  state: login.state, accessTokenExpiresAt: Date(timeIntervalSince1970: login.accessTokenExpiresAt),
                  refreshTokenExpiresAt: login.refreshTokenExpiresAt.map(Date.init(timeIntervalSince1970:)),
                  absoluteExpiresAt: login.absoluteExpiresAt.map(Date.init(timeIntervalSince1970:)), hasRefreshToken: login.hasRefreshToken)
    }
}

extension SessionInterface.Event {
    public init(_ event: SessionEvent) {
        let kind: SessionInterface.EventKind
        switch event.kind {
        case .saved: kind = .saved
        case .refreshed: kind = .refreshed
        case .expired: kind = .expired
        case .reauthRequired: kind = .reauthRequired
        case .loggedOut: kind = .loggedOut
        }
        self.init(kind: kind, service: event.key.service, account: event.key.account, at: event.at.timeIntervalSince1970)
    }
}

extension SessionEvent {
    /// A Watch reply's event; nil for `watching`, which only says the subscription holds.
    public init?(wire event: SessionInterface.Event) throws {
        let kind: SessionEvent.Kind
        switch event.kind {
        case .watching: return nil
        case .saved: kind = .saved
        case .refreshed: kind = .refreshed
        case .expired: kind = .expired
        case .reauthRequired: kind = .reauthRequired
        case .loggedOut: kind = .loggedOut
        }
        self.init(kind: kind, key: try ItemKey(service: event.service, account: event.account),
                  at: Date(timeIntervalSince1970: event.at))
    }
}

extension SessionInterface.Provider {
    /// The provider as Save sends it; the client secret and API key stay in secure memory.
    public init(_ settings: ProviderSettings) {
        let hasClientAuthentication = settings.kind == .oauth2 || settings.kind == .oidc
        self.init(kind: settings.kind.rawValue, tokenEndpoint: settings.tokenEndpoint?.absoluteString,
                  revocationEndpoint: settings.revocationEndpoint?.absoluteString, clientId: settings.clientID,
                  clientSecret: settings.clientSecret,
                  clientAuthentication: hasClientAuthentication ? settings.clientAuthentication.rawValue : nil,
                  issuer: settings.issuer?.absoluteString, url: settings.url?.absoluteString, apiKey: settings.apiKey,
                  authorizationEndpoint: settings.authorizationEndpoint?.absoluteString,
                  deviceAuthorizationEndpoint: settings.deviceAuthorizationEndpoint?.absoluteString,
                  externalProvider: settings.externalProvider)
    }

    public init(_ provider: OAuthProvider) {
        self.init(ProviderSettings(provider))
    }
}

extension ProviderSettings {
    /// The settings of a Save, checked field by field (errors name `provider.<field>`).
    public init(wire provider: SessionInterface.Provider) throws(WireParameterError) {
        func parsedURL(_ field: String, _ text: String?) throws(WireParameterError) -> URL? {
            guard let text else { return nil }
            guard let url = URL(string: text) else { throw WireParameterError("provider.\(field)", "is not a URL") }
            return url
        }
        func secret(_ field: String, _ value: SecureBytes?) throws(WireParameterError) -> SecureBytes? {
            guard let value else { return nil }
            guard value.count > 0 else { throw WireParameterError("provider.\(field)", "must be 1 to 4096 bytes") }
            return value
        }
        self.init()
        if let text = provider.kind {
            guard let kind = ProviderKind(rawValue: text) else {
                throw WireParameterError("provider.kind", "must be one of \(ProviderKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.kind = kind
        }
        if let text = provider.clientAuthentication {
            guard let parsed = OAuthProvider.ClientAuthentication(rawValue: text) else {
                throw WireParameterError("provider.clientAuthentication", "must be \"basic\" or \"post\"")
            }
            clientAuthentication = parsed
        }
        tokenEndpoint = try parsedURL("tokenEndpoint", provider.tokenEndpoint)
        revocationEndpoint = try parsedURL("revocationEndpoint", provider.revocationEndpoint)
        clientID = provider.clientId
        clientSecret = try secret("clientSecret", provider.clientSecret)
        issuer = try parsedURL("issuer", provider.issuer)
        url = try parsedURL("url", provider.url)
        apiKey = try secret("apiKey", provider.apiKey)
        authorizationEndpoint = try parsedURL("authorizationEndpoint", provider.authorizationEndpoint)
        deviceAuthorizationEndpoint = try parsedURL("deviceAuthorizationEndpoint", provider.deviceAuthorizationEndpoint)
        if let name = provider.externalProvider {
            guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D }) else {
                throw WireParameterError("provider.externalProvider", "must be 1 to 64 lowercase letters, digits, - or _ (e.g. github)")
            }
            externalProvider = name
        }
    }
}

extension SessionInterface.FleetRevoke.Reply {
    public init(_ result: BulkLogoutResult) {
        self.init(loggedOut: Int64(result.loggedOut), revoked: Int64(result.revoked), revocationsQueued: Int64(result.revocationsQueued))
    }
}

extension BulkLogoutResult {
    public init(wire reply: SessionInterface.FleetRevoke.Reply) {
        self.init(loggedOut: Int(clamping: reply.loggedOut), revoked: Int(clamping: reply.revoked),
                  revocationsQueued: Int(clamping: reply.revocationsQueued))
    }
}

extension SessionInterface.FleetRewrap.Reply {
    public init(_ result: DataKeyRewrap) {
        self.init(keyId: Int64(result.keyID), rows: Int64(result.rows), retiredKeys: result.retiredKeyIDs.map { SessionInterface.DataKey(id: Int64($0), rows: 0) })
    }
}

extension DataKeyRewrap {
    public init(wire reply: SessionInterface.FleetRewrap.Reply) {
        self.init(keyID: Int(clamping: reply.keyId), rows: Int(clamping: reply.rows), retiredKeyIDs: reply.retiredKeys.map { Int(clamping: $0.id) })
    }
}

extension SessionInterface.FleetStatus.Reply {
    public init(_ status: FleetStatus) {
        self.init(pendingRevocations: Int64(status.revocations.pending), stuckRevocations: Int64(status.revocations.stuck),
                  stuckAfter: Int64(status.stuckAfter), oldestRevocationSeconds: status.revocations.oldestAge,
                  loginsInDoubt: Int64(status.loginsInDoubt),
                  dataKeys: status.dataKeys?.map { SessionInterface.DataKey(id: Int64($0.id), rows: Int64($0.rows)) })
    }
}

extension FleetStatus {
    public init(wire reply: SessionInterface.FleetStatus.Reply) {
        self.init(revocations: RevocationBacklog(pending: Int(clamping: reply.pendingRevocations), stuck: Int(clamping: reply.stuckRevocations),
                                                 oldestAge: reply.oldestRevocationSeconds),
                  stuckAfter: Int(clamping: reply.stuckAfter), loginsInDoubt: Int(clamping: reply.loginsInDoubt),
                  dataKeys: reply.dataKeys?.map { DataKeyUse(id: Int(clamping: $0.id), rows: Int(clamping: $0.rows)) })
    }
}
