import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// One login as `List` shows it: whose it is and in what state — never a token, a client secret or
/// the provider settings. An app that does not know its account name finds its login here.
///
/// ```swift
/// for login in try await sessions.list(service: "com.sorted.api") where login.state != "reauthRequired" {
///     print(login.account, login.userID ?? "—")
/// }
/// ```
///
/// The fields follow ``SessionStatus``: a field added there (a provider kind, say) is carried here
/// by adding it to this struct, ``init(service:account:status:)`` and the wire format's `Login` type.
public struct SessionListEntry: Sendable, Equatable {
    public var service: String
    public var account: String
    /// The login's ``ProviderKind`` (`oauth2`, `oidc`, `firebase`, `supabase`).
    public var providerKind: String
    /// The provider's user id (`sub`), when it gave one.
    public var userID: String?
    /// As ``SessionStatus/state``: `valid`, `refreshDue`, `expired` or `reauthRequired`.
    public var state: String
    public var accessTokenExpiresAt: Date
    public var refreshTokenExpiresAt: Date?
    public var absoluteExpiresAt: Date?
    public var hasRefreshToken: Bool

    public init(service: String, account: String, providerKind: String = ProviderKind.oauth2.rawValue, userID: String?,
                state: String, accessTokenExpiresAt: Date, refreshTokenExpiresAt: Date?, absoluteExpiresAt: Date?,
                hasRefreshToken: Bool) {
        self.service = service
        self.account = account
        self.providerKind = providerKind
        self.userID = userID
        self.state = state
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.refreshTokenExpiresAt = refreshTokenExpiresAt
        self.absoluteExpiresAt = absoluteExpiresAt
        self.hasRefreshToken = hasRefreshToken
    }

    /// The entry of a login whose status is `status`.
    public init(service: String, account: String, status: SessionStatus) {
        self.init(service: service, account: account, providerKind: status.providerKind, userID: status.userID, state: status.state,
                  accessTokenExpiresAt: status.accessTokenExpiresAt, refreshTokenExpiresAt: status.refreshTokenExpiresAt,
                  absoluteExpiresAt: status.absoluteExpiresAt, hasRefreshToken: status.hasRefreshToken)
    }
}
