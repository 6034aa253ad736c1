/// Identifies an item, like a Keychain generic-password item: a `service` (the app or backend, for
/// example `com.sorted.api`) and an `account` within it (for example a user id).
///
/// Construction validates both names against ``Limits`` and the name rule (``checkName(_:what:)``:
/// Unicode NFC, see `ItemKey+Normalization.swift`), so every `ItemKey` is one that all backends,
/// the policy and the session manager read the same way.
///
/// Two keys are equal only when their names are the same UTF-8 bytes. Swift's `String ==` treats
/// canonically equivalent text ("K" and KELVIN SIGN "K") as equal, while storage and the policy
/// compare bytes; a key that used `String` equality let one login's in-memory state (refresh
/// flight, locks, events) answer for another's name. Never compare names with `==` on `String`
/// where an identity is meant: compare keys, or `utf8`.
public struct ItemKey: Hashable, Sendable, CustomStringConvertible {
    public let service: String
    public let account: String

    public init(service: String, account: String) throws {
        try Self.checkName(service, what: "service")
        try Self.checkName(account, what: "account")
        self.service = service
        self.account = account
    }

    /// A key read back from the vault's own authenticated records: checked against the limits but
    /// not the NFC rule, so an item stored before that rule stays listable rather than turning the
    /// whole listing into an error. Equality is by bytes, so such a key never aliases another.
    public init(storedService service: String, account: String) throws {
        try validateText(service, what: "service", maxBytes: Limits.maximumNameBytes)
        try validateText(account, what: "account", maxBytes: Limits.maximumNameBytes)
        self.service = service
        self.account = account
    }

    /// Checks one name against the rules for services and accounts; `what` names it in the error.
    ///
    /// The one place the name rule lives: non-empty, at most ``Limits/maximumNameBytes``, no control
    /// characters, and in Unicode Normalization Form C (a name that NFC would change is refused).
    public static func checkName(_ value: String, what: String) throws {
        try validateText(value, what: what, maxBytes: Limits.maximumNameBytes)
        try requireNFC(value, what: what)
    }

    public var description: String { "\(service.debugDescription)/\(account.debugDescription)" }

    /// Services starting with this are sortedvault's own records (logins, queued revocations). The
    /// daemon's item API refuses them, so a client reaches them only through the session API.
    public static let reservedServicePrefix = "sortedvault/"

    /// Whether this item belongs to sortedvault itself (see ``reservedServicePrefix``), by bytes:
    /// `String.hasPrefix` compares characters, and "sortedvault/" followed by a combining mark
    /// would not count as the prefix there.
    public var isReserved: Bool { service.utf8.starts(with: Self.reservedServicePrefix.utf8) }

    // MARK: Identity by bytes

    public static func == (lhs: ItemKey, rhs: ItemKey) -> Bool {
        lhs.service.utf8.elementsEqual(rhs.service.utf8) && lhs.account.utf8.elementsEqual(rhs.account.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        Self.hashBytes(service, into: &hasher)
        Self.hashBytes(account, into: &hasher)
    }

    /// The name's length, then its UTF-8 bytes: the length keeps ("ab", "c") and ("a", "bc") apart.
    private static func hashBytes(_ name: String, into hasher: inout Hasher) {
        hasher.combine(name.utf8.count)
        let done: Void? = name.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in name.utf8 { hasher.combine(byte) }
        }
    }
}
