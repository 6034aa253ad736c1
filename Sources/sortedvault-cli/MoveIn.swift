import FoundationEssentials

import VaultClient
import VaultCore
import VaultCrypto

/// The one rule every import stores an item by (a tool's file, a backup): the same secret already
/// there counts as moved in; another secret is kept unless the user asked to replace it.
enum MoveIn {
    struct Tally {
        var stored = 0
        /// Items kept with another secret, named with where the import found them.
        var kept: [String] = []
        /// A backup's items whose expiry passed since it was made.
        var expired = 0

        /// For the access log's owner line: counts only, never an item's name (the log keeps names as
        /// pseudonyms).
        var note: String { "items \(stored) stored, \(kept.count) kept" + (expired > 0 ? ", \(expired) expired" : "") }

        func lines() -> [String] {
            var lines = ["Stored \(stored) item\(stored == 1 ? "" : "s")."]
            if !kept.isEmpty {
                lines.append("Kept \(kept.count) item\(kept.count == 1 ? "" : "s") already in the vault with another secret "
                             + "(the imported ones stay where they were; --on-conflict replace replaces them): " + kept.joined(separator: ", "))
            }
            if expired > 0 { lines.append("Skipped \(expired) item\(expired == 1 ? "" : "s") that expired since the backup.") }
            return lines
        }
    }

    /// Stores `secret` at `key` by the rule; true when the vault now holds this secret there
    /// (stored, or the same one already), so the source may give it up.
    @discardableResult
    static func store(_ secret: SecureBytes, at key: ItemKey, options: StoreOptions, replace: Bool, client: VaultClient,
                      into tally: inout Tally, source: String) async throws -> Bool {
        if !replace, let held = try await heldSecret(at: key, client: client) {
            if held == secret { return true }
            tally.kept.append("\(key) (\(source))")
            return false
        }
        try await client.store(secret, for: key, options: options)
        tally.stored += 1
        return true
    }

    /// The secret the vault holds at `key`; nil when there is none (the daemon's `NotFound`).
    private static func heldSecret(at key: ItemKey, client: VaultClient) async throws -> SecureBytes? {
        do {
            return try await client.retrieve(key).secret
        } catch let error as VaultError where error.code == .notFound {
            return nil
        }
    }
}
