/// Identifies an item, like a Keychain generic-password item: a `service` (the app or backend, for
/// example `com.sorted.api`) and an `account` within it (for example a user id).
///
/// Construction validates both names against ``Limits``, so every `ItemKey` is one that all
/// backends accept.
public struct ItemKey: Hashable, Sendable, CustomStringConvertible {
    public let service: String
    public let account: String

    public init(service: String, account: String) throws {
        try validateText(service, what: "service", maxBytes: Limits.maximumNameBytes)
        try validateText(account, what: "account", maxBytes: Limits.maximumNameBytes)
        self.service = service
        self.account = account
    }

    /// Checks one name against the rules for services and accounts; `what` names it in the error.
    public static func checkName(_ value: String, what: String) throws {
        try validateText(value, what: what, maxBytes: Limits.maximumNameBytes)
    }

    public var description: String { "\(service.debugDescription)/\(account.debugDescription)" }

    /// Services starting with this are sortedvault's own records (logins, queued revocations). The
    /// daemon's item API refuses them, so a client reaches them only through the session API.
    public static let reservedServicePrefix = "sortedvault/"

    /// Whether this item belongs to sortedvault itself (see ``reservedServicePrefix``).
    public var isReserved: Bool { service.hasPrefix(Self.reservedServicePrefix) }
}
