import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// Something that happened to a login, for subscribers (varlink `Watch`): a client on its sign-in
/// screen learns of a new login, one that shows its account learns that it ended.
public struct SessionEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A login was saved (signed in).
        case saved
        /// The tokens were refreshed.
        case refreshed
        /// The login reached its absolute lifetime or its refresh token's expiry and was wiped.
        case expired
        /// The provider refused the refresh token; the login was wiped.
        case reauthRequired
        /// The login was logged out and wiped.
        case loggedOut
    }

    public let kind: Kind
    public let key: ItemKey
    public let at: Date

    /// An event as it happened: ``SessionManager`` makes them, `SessionClient` reads them from Watch.
    public init(kind: Kind, key: ItemKey, at: Date) {
        self.kind = kind
        self.key = key
        self.at = at
    }
}
