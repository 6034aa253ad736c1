import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// What a caller may set alongside a secret. Validated on construction against ``Limits``.
public struct StoreOptions: Sendable, Equatable {
    /// A human-readable name, as Keychain's "label".
    public var label: String?
    /// Free-form, non-secret-to-the-caller string attributes (they are still stored encrypted).
    public var attributes: [String: String]
    /// After this instant the item is never returned and is purged.
    public var expiresAt: Date?
    /// When a login is due for its proactive refresh, written with it by a store that offers
    /// ``DueRefreshes`` (in clear, as `expiresAt` is: a time, never a secret); other stores ignore it.
    /// nil: never due.
    public var refreshDueAt: Date?

    public init(label: String? = nil, attributes: [String: String] = [:], expiresAt: Date? = nil, refreshDueAt: Date? = nil) throws {
        if let label { try validateText(label, what: "label", maxBytes: Limits.maximumLabelBytes, allowEmpty: true) }
        if attributes.count > Limits.maximumAttributeCount {
            throw VaultError.invalidArgument(
                "\(attributes.count) attributes given; the limit is \(Limits.maximumAttributeCount)")
        }
        for (name, value) in attributes {
            try validateText(name, what: "attribute name", maxBytes: Limits.maximumAttributeNameBytes)
            try validateText(value, what: "attribute value", maxBytes: Limits.maximumAttributeValueBytes, allowEmpty: true)
        }
        self.label = label
        self.attributes = attributes
        self.expiresAt = expiresAt
        self.refreshDueAt = refreshDueAt
    }

    /// No label, no attributes, no expiry.
    public static let none = try! StoreOptions()
}

/// Everything about an item except its secret: what `list` returns.
public struct ItemMetadata: Sendable, Equatable, CustomStringConvertible {
    public var key: ItemKey
    public var label: String?
    public var attributes: [String: String]
    public var createdAt: Date
    public var modifiedAt: Date
    public var expiresAt: Date?

    public init(key: ItemKey, label: String?, attributes: [String: String], createdAt: Date, modifiedAt: Date, expiresAt: Date?) {
        self.key = key
        self.label = label
        self.attributes = attributes
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.expiresAt = expiresAt
    }

    public var service: String { key.service }
    public var account: String { key.account }

    /// Whether the item has expired at `now`. An item expires at its expiry instant.
    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return now >= expiresAt
    }

    public var description: String { "Item(\(key))" }
}

/// An item with its secret, as `retrieve` returns it.
public struct RetrievedItem: Sendable, CustomStringConvertible {
    public let metadata: ItemMetadata
    /// The secret, in secure memory.
    public let secret: SecureBytes

    public init(metadata: ItemMetadata, secret: SecureBytes) {
        self.metadata = metadata
        self.secret = secret
    }

    public var description: String { "RetrievedItem(\(metadata.key), secret: <redacted>)" }
}

/// Checks a secret against ``Limits/maximumSecretBytes``.
public func validateSecret(_ secret: SecureBytes) throws {
    if secret.count > Limits.maximumSecretBytes {
        throw VaultError.invalidArgument(
            "the secret is \(secret.count) bytes; the limit is \(Limits.maximumSecretBytes) bytes (512 KiB)")
    }
}
