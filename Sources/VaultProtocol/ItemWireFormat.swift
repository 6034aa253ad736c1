import Foundation
import Varlink
import VaultCore

/// `ItemMetadata` as the `Item` type of the interface.
public enum ItemWireFormat {
    public static func encode(_ item: ItemMetadata) -> JSONValue {
        var object: [String: JSONValue] = [
            "service": .string(item.service),
            "account": .string(item.account),
            "attributes": .object(item.attributes.mapValues { .string($0) }),
            "created": .double(item.createdAt.timeIntervalSince1970),
            "modified": .double(item.modifiedAt.timeIntervalSince1970),
        ]
        if let label = item.label { object["label"] = .string(label) }
        if let expires = item.expiresAt { object["expires"] = .double(expires.timeIntervalSince1970) }
        return .object(object)
    }

    /// Decodes and validates an `Item`; a malformed one is a protocol error.
    public static func decode(_ value: JSONValue) throws -> ItemMetadata {
        guard let object = value.objectValue,
              let service = object["service"]?.stringValue, let account = object["account"]?.stringValue,
              let created = object["created"]?.doubleValue, let modified = object["modified"]?.doubleValue
        else { throw VaultError.storageFailure("the daemon sent a malformed item; check that client and daemon versions match") }
        var attributes: [String: String] = [:]
        for (name, value) in object["attributes"]?.objectValue ?? [:] {
            guard let text = value.stringValue else { throw VaultError.storageFailure("the daemon sent a malformed attribute") }
            attributes[name] = text
        }
        return ItemMetadata(
            key: try ItemKey(service: service, account: account),
            label: object["label"]?.stringValue, attributes: attributes,
            createdAt: Date(timeIntervalSince1970: created), modifiedAt: Date(timeIntervalSince1970: modified),
            expiresAt: object["expires"]?.doubleValue.map(Date.init(timeIntervalSince1970:)))
    }
}
