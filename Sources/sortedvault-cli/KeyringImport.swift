import FoundationEssentials
import NIOPosix

import VaultClient
import VaultCore
import VaultCrypto
import VaultImport
import VaultSecretService

/// `sortedvault import secret-service`: every item of the desktop keyring's default collection,
/// read through libsecret (loaded on demand, as the daemon does), stored by the import's one rule
/// under ``ImportNaming/destination(forKeyringItem:attributes:)``, its attributes kept. The keyring
/// is left as it is. The vault's own key (schema `org.sortedvault.VaultKey`) is never imported.
struct KeyringImport {
    let replace: Bool

    static let vaultKeySchema = "org.sortedvault.VaultKey"
    /// Attributes that say how an item was stored, not what it is: not carried into the vault.
    static let storageAttributes: Set<String> = ["xdg:schema", "sortedvault"]

    func run(client: VaultClient) async throws -> (report: String, note: String) {
        let items = try await SecretServiceKeyring(threadPool: .singleton).defaultCollectionItems()
            .filter { $0.attributes["xdg:schema"] != Self.vaultKeySchema }
        var tally = MoveIn.Tally()
        var dropped = 0
        for item in items {
            let destination = try ImportNaming.destination(forKeyringItem: item.label, attributes: item.attributes)
            let (attributes, left) = Self.kept(item.attributes)
            dropped += left
            let label = item.label.isEmpty || item.label.utf8.count > Limits.maximumLabelBytes ? destination.label : item.label
            try await MoveIn.store(item.secret, at: destination.key, options: try StoreOptions(label: label, attributes: attributes),
                                   replace: replace, client: client, into: &tally, source: "the keyring")
        }
        var lines = ["Read \(items.count) item\(items.count == 1 ? "" : "s") of the desktop keyring's default collection."]
        lines += tally.lines()
        if dropped > 0 {
            lines.append("Left out \(dropped) attribute\(dropped == 1 ? "" : "s") over the vault's limits (\(Limits.maximumAttributeCount) per item, names of \(Limits.maximumAttributeNameBytes) bytes, values of \(Limits.maximumAttributeValueBytes)).")
        }
        return (lines.joined(separator: "\n"), "imported the desktop keyring's default collection (\(items.count) items): \(tally.note)")
    }

    /// The attributes the vault keeps of an item, and how many it leaves out (over its limits).
    static func kept(_ attributes: [String: String]) -> ([String: String], Int) {
        var kept: [String: String] = [:]
        var left = 0
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) where !storageAttributes.contains(name) {
            guard kept.count < Limits.maximumAttributeCount, !name.isEmpty, name.utf8.count <= Limits.maximumAttributeNameBytes,
                  value.utf8.count <= Limits.maximumAttributeValueBytes else {
                left += 1
                continue
            }
            kept[name] = value
        }
        return (kept, left)
    }
}
