import CSecretLoader
import FoundationEssentials

import VaultCore
import VaultCrypto

/// One item of the desktop keyring, with its secret, as `sortedvault import secret-service` reads it.
public struct KeyringItem: Sendable {
    public let label: String
    /// Every attribute the item has, `xdg:schema` (the schema libsecret stored it under) included.
    public let attributes: [String: String]
    public let secret: SecureBytes
}

extension SecretServiceKeyring {
    /// Every item of the default collection, with its secret, sorted by label. Throws `.locked` when
    /// the collection is locked: it never unlocks, so it never prompts.
    public func defaultCollectionItems() async throws -> [KeyringItem] {
        try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            let collection = try session.defaultCollection()
            if try session.isLocked(collection) { throw SecretServiceErrors.locked(collection) }
            let found = try session.search(nil, [:])
            if !found.locked.contains(where: { $0.hasPrefix(collection + "/") }) {
                let paths = found.unlocked.filter { $0.hasPrefix(collection + "/") }
                let secrets = try session.secrets(of: paths)
                return try paths.compactMap { path -> KeyringItem? in
                    guard let secret = secrets[path] else { return nil }  // deleted since the search
                    let details = try session.details(of: path)
                    return KeyringItem(label: details.label, attributes: details.attributes, secret: secret)
                }.sorted { $0.label < $1.label }
            }
            throw SecretServiceErrors.locked(collection)
        }
    }
}
