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

    public var description: String { "\(service.debugDescription)/\(account.debugDescription)" }
}
