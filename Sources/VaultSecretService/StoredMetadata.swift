import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// The part of an item's metadata the Secret Service has no field for, kept as JSON in the item's
/// `sortedvault` attribute. Attributes are stored in clear by gnome-keyring and most providers:
/// this backend protects names only as well as the keyring does.
struct StoredMetadata: Codable, Equatable {
    var label: String?
    var attributes: [String: String]
    /// Seconds since 1970, from sortedvault's clock (the service's own dates have whole seconds only).
    var created: Double
    var modified: Double
    var expires: Double?

    init(_ metadata: ItemMetadata) {
        label = metadata.label
        attributes = metadata.attributes
        created = metadata.createdAt.timeIntervalSince1970
        modified = metadata.modifiedAt.timeIntervalSince1970
        expires = metadata.expiresAt?.timeIntervalSince1970
    }

    func encoded() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    static func decode(_ text: String) -> StoredMetadata? {
        try? JSONDecoder().decode(StoredMetadata.self, from: Data(text.utf8))
    }

    /// The metadata of an item as found in the keyring. An item without a readable `sortedvault`
    /// attribute — stored by another tool — gets its label, other attributes and dates from the service.
    static func metadata(of item: ItemDetails, key: ItemKey) -> ItemMetadata {
        if let stored = item.attributes[ItemAttributes.metadata].flatMap(decode) {
            return ItemMetadata(key: key, label: stored.label, attributes: stored.attributes,
                                createdAt: Date(timeIntervalSince1970: stored.created),
                                modifiedAt: Date(timeIntervalSince1970: stored.modified),
                                expiresAt: stored.expires.map { Date(timeIntervalSince1970: $0) })
        }
        var attributes = item.attributes
        for name in [ItemAttributes.service, ItemAttributes.account, ItemAttributes.metadata, ItemAttributes.schema] {
            attributes[name] = nil
        }
        return ItemMetadata(key: key, label: item.label, attributes: attributes, createdAt: item.created,
                            modifiedAt: item.modified, expiresAt: nil)
    }
}
