import Logging
import PostgresNIO
import VaultCore
import VaultCrypto

/// The fleet's keys as this host holds them: the lookup key and every data key the key table lists,
/// each stored there wrapped (AEAD) under the host's master key and unwrapped here into secure memory.
///
/// Rows name their data key by id; a key another daemon added (a rewrap) is loaded on first sight.
/// The master key never leaves this object and is never written to the database.
final class FleetKeyRing: Sendable {
    static let lookupKeyID: Int32 = 0
    static let firstDataKeyID: Int32 = 1

    private struct Keys {
        var lookup: SecureBytes?
        var data: [Int32: SecureBytes] = [:]
    }
    private let master: SecureBytes
    private let keys = Locked(Keys())

    init(master: SecureBytes) throws {
        guard master.count == AEAD.keyCount else {
            throw VaultError(.keySourceRejected, "the master key is \(master.count) bytes; the fleet store needs a 32-byte key")
        }
        self.master = master
    }

    /// The row identifier of an item: a keyed hash of its names, useless without the lookup key.
    func lookup(for key: ItemKey) throws -> [UInt8] {
        guard let lookupKey = keys.withLock({ $0.lookup }) else { throw VaultErrorText.noActiveKey }
        return KeyedHash.tag(key: lookupKey, context: "sortedvault fleet lookup v1", parts: [Array(key.service.utf8), Array(key.account.utf8)])
    }

    func dataKey(_ id: Int32) -> SecureBytes? { keys.withLock { $0.data[id] } }

    /// Creates the lookup key and data key 1 when the table is empty. Run inside the migration
    /// transaction, under its lock, so daemons starting together agree on one set of keys.
    func createIfEmpty(_ connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query("SELECT count(*) FROM sortedvault_keys", logger: logger).collect()
        guard try rows.first?.decode(Int64.self) == 0 else { return }
        try await insert(id: Self.lookupKeyID, purpose: "lookup", connection, logger: logger)
        try await insert(id: Self.firstDataKeyID, purpose: "data", connection, logger: logger)
    }

    /// Adds data key `id` as active: a fresh random key, wrapped under the master key.
    func insert(id: Int32, purpose: String, _ connection: PostgresConnection, logger: Logger) async throws {
        let key = SecureBytes(randomCount: AEAD.keyCount)
        let wrapped = try AEAD.seal(key, key: master, associatedData: Self.wrapping(purpose: purpose, id: id))
        try await connection.query(
            "INSERT INTO sortedvault_keys (key_id, purpose, state, wrapped) VALUES (\(id), \(purpose), 'active', \(ByteBuffer(bytes: wrapped)))",
            logger: logger)
    }

    /// Reads and unwraps every key the table lists.
    func reload(_ connection: PostgresConnection, logger: Logger) async throws {
        var fresh = Keys()
        for row in try await connection.query("SELECT key_id, purpose, wrapped FROM sortedvault_keys", logger: logger).collect() {
            let (id, purpose, wrapped) = try row.decode((Int32, String, ByteBuffer).self)
            let key: SecureBytes
            do { key = try AEAD.open(Array(wrapped.readableBytesView), key: master, associatedData: Self.wrapping(purpose: purpose, id: id)) }
            catch { throw VaultErrorText.keyDoesNotOpen(id) }
            if purpose == "lookup" { fresh.lookup = key } else { fresh.data[id] = key }
        }
        guard fresh.lookup != nil, !fresh.data.isEmpty else { throw VaultErrorText.noActiveKey }
        keys.withLock { $0 = fresh }
    }

    /// The data key new rows are sealed under (the active one with the highest id), locked `FOR SHARE`
    /// until the transaction ends, so a rewrap cannot retire it while this transaction writes with it.
    func activeDataKey(_ connection: PostgresConnection, logger: Logger) async throws -> (Int32, SecureBytes) {
        // Twice: after waiting on a rewrap's lock, READ COMMITTED rechecks the old row only and may
        // return nothing; a second statement sees the committed key table.
        for _ in 0..<2 {
            let rows = try await connection.query(
                "SELECT key_id FROM sortedvault_keys WHERE purpose = 'data' AND state = 'active' ORDER BY key_id DESC LIMIT 1 FOR SHARE",
                logger: logger).collect()
            guard let id = try rows.first?.decode(Int32.self) else { continue }
            if let key = dataKey(id) { return (id, key) }
            try await reload(connection, logger: logger)
            if let key = dataKey(id) { return (id, key) }
        }
        throw VaultErrorText.noActiveKey
    }

    /// What a wrapped key is bound to: its purpose and id, so one key's wrapping cannot stand in for another's.
    private static func wrapping(purpose: String, id: Int32) -> [UInt8] {
        Array("sortedvault fleet key v1".utf8) + [0] + Array(purpose.utf8) + [0] + RowSeal.bigEndian(Int64(id))
    }
}
