import FoundationEssentials
import NIOCore
import PostgresNIO
import Vault
import VaultCore
import VaultCrypto

/// A backup's read of the fleet's store: one SELECT, which PostgreSQL answers from one snapshot,
/// so a backup taken while daemons refresh holds each login before or after a refresh, never half.
extension PostgresTokenStore: TokenStoreSnapshots {
    public func snapshot() async throws -> [RetrievedItem] {
        let rows = try await connection { connection, logger in
            try await connection.query(
                "SELECT lookup, generation, key_id, sealed_metadata, sealed_secret FROM sortedvault_items", logger: logger).collect()
        }
        let now = clock.now
        var items: [RetrievedItem] = []
        var damaged = 0
        for row in rows {
            let (lookup, generation, keyID, sealedMetadata, sealedSecret) = try row.decode((ByteBuffer, Int64, Int32, ByteBuffer, ByteBuffer).self)
            let identity = RowSeal.Identity(lookup: Array(lookup.readableBytesView), generation: generation, keyID: keyID)
            do {
                let dataKey = try await dataKey(keyID)
                let metadata = try SealedMetadata.decode(RowSeal.open(sealedMetadata, .metadata, identity, key: dataKey))
                guard try keys.lookup(for: metadata.key) == identity.lookup else { throw VaultErrorText.rowDoesNotOpen }
                if metadata.isExpired(at: now) { continue }
                items.append(RetrievedItem(metadata: metadata, secret: try RowSeal.open(sealedSecret, .secret, identity, key: dataKey)))
            } catch let error as VaultError where error.code == .integrityFailure {
                integrity.failed("sortedvault_items", row: ChangeHints.hex(identity.lookup), "no backup was made")
                damaged += 1
            }
        }
        if damaged > 0 {
            throw VaultError.integrityFailure(
                "\(damaged) row(s) of the fleet's store failed their integrity check, so no backup was made (it would miss them); see `sortedvault fleet status`")
        }
        return items.sorted { ($0.metadata.service, $0.metadata.account) < ($1.metadata.service, $1.metadata.account) }
    }
}
