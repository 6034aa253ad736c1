import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultAPI
import VaultCore
import VaultCrypto

/// VaultAPI's item types (seconds, plain names) and VaultCore's (`Date`, validated `ItemKey`):
/// the one place they convert.
extension VaultInterface.Item {
    public init(_ item: ItemMetadata) {
        self.init(service: item.service, account: item.account, label: item.label, attributes: item.attributes,
                  created: item.createdAt.timeIntervalSince1970, modified: item.modifiedAt.timeIntervalSince1970,
                  expires: item.expiresAt?.timeIntervalSince1970)
    }
}

extension ItemMetadata {
    /// An item the daemon sent; a name that breaks the rules is a malformed reply.
    public init(wire item: VaultInterface.Item) throws {
        let key: ItemKey
        do {
            key = try ItemKey(service: item.service, account: item.account)
        } catch {
            throw VaultError.storageFailure("the daemon sent a malformed item; check that client and daemon versions match")
        }
        self.init(key: key, label: item.label, attributes: item.attributes,
                  createdAt: Date(timeIntervalSince1970: item.created), modifiedAt: Date(timeIntervalSince1970: item.modified),
                  expiresAt: item.expires.map(Date.init(timeIntervalSince1970:)))
    }
}

extension VaultInterface.ItemName {
    public init(_ key: ItemKey) {
        self.init(service: key.service, account: key.account)
    }

    /// The validated key; a name that breaks `ItemKey`'s rules is an error naming its parameter.
    public func key() throws(WireParameterError) -> ItemKey {
        let service = try Self.checked(service, parameter: "service")
        let account = try Self.checked(account, parameter: "account")
        do {
            return try ItemKey(service: service, account: account)
        } catch {
            throw WireParameterError("account", "is not a valid name")
        }
    }

    /// A service or account name that passes `ItemKey`'s rules (an error names `parameter`).
    public static func checked(_ name: String, parameter: String) throws(WireParameterError) -> String {
        do {
            try ItemKey.checkName(name, what: parameter)
            return name
        } catch let error as VaultError {
            throw WireParameterError(parameter, error.reason)
        } catch {
            throw WireParameterError(parameter, "is not a valid name")
        }
    }
}

extension VaultInterface.Store.Request {
    public init(key: ItemKey, secret: SecureBytes, options: StoreOptions) {
        self.init(service: key.service, account: key.account, secret: secret, label: options.label,
                  attributes: options.attributes.isEmpty ? nil : options.attributes, expires: options.expiresAt?.timeIntervalSince1970)
    }

    /// The item's options, checked by `StoreOptions`' rules (errors name `label` or `attributes`).
    public func options() throws(WireParameterError) -> StoreOptions {
        do {
            return try StoreOptions(label: label, attributes: attributes ?? [:], expiresAt: expires.map(Date.init(timeIntervalSince1970:)))
        } catch let error as VaultError {
            throw WireParameterError(error.reason.hasPrefix("label") ? "label" : "attributes", error.reason)
        } catch {
            throw WireParameterError("attributes", "is not valid")
        }
    }
}

extension SessionInterface.LoginName {
    public init(_ key: ItemKey) {
        self.init(service: key.service, account: key.account)
    }

    /// The validated key, by the same rules as an item's.
    public func key() throws(WireParameterError) -> ItemKey {
        try VaultInterface.ItemName(service: service, account: account).key()
    }
}
