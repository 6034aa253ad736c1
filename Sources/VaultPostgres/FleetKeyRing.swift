import Logging
import PostgresNIO
import VaultCore
import VaultCrypto

/// The fleet's keys as this host holds them: the lookup key and every data key the key table lists,
/// each stored there wrapped (AEAD) under the host's master key and unwrapped here into secure memory.
///
/// Rows name their data key by id; a key another daemon added (a rewrap) is loaded on first sight.
/// The master key never leaves this object and is never written to the database.
///
/// A data key's retirement is sealed too: a rewrap wraps the key again with `retired` in its
/// associated data, so a `state` set back to `active` by hand contradicts the wrap. Such a key is
/// still read (rows may name it) but never written under, and the contradiction is reported.
final class FleetKeyRing: Sendable {
    static let lookupKeyID: Int32 = 0
    static let firstDataKeyID: Int32 = 1

    private struct Keys {
        var lookup: SecureBytes?
        var data: [Int32: SecureBytes] = [:]
        /// Data keys whose wrap says a rewrap retired them, whatever their `state` column says.
        var retired: Set<Int32> = []
    }
    private let master: SecureBytes
    private let keys = Locked(Keys())
    private let integrity: IntegrityReport

    init(master: SecureBytes, integrity: IntegrityReport) throws {
        guard master.count == AEAD.keyCount else {
            throw VaultError(.keySourceRejected, "the master key is \(master.count) bytes; the fleet store needs a 32-byte key")
        }
        self.master = master
        self.integrity = integrity
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
        for row in try await connection.query("SELECT key_id, purpose, state, wrapped FROM sortedvault_keys", logger: logger).collect() {
            let (id, purpose, state, wrapped) = try row.decode((Int32, String, String, ByteBuffer).self)
            let bytes = Array(wrapped.readableBytesView)
            let key: SecureBytes
            if let active = try? AEAD.open(bytes, key: master, associatedData: Self.wrapping(purpose: purpose, id: id)) {
                key = active
            } else if purpose == "data",
                      let retired = try? AEAD.open(bytes, key: master, associatedData: Self.wrapping(purpose: purpose, id: id, retired: true)) {
                key = retired
                fresh.retired.insert(id)
                if state != "retired" {
                    integrity.failed("sortedvault_keys", row: String(id),
                                     "data key \(id) is marked \(state) but a rewrap retired it; nothing is written under it")
                }
            } else {
                throw VaultErrorText.keyDoesNotOpen(id)
            }
            if purpose == "lookup" { fresh.lookup = key } else { fresh.data[id] = key }
        }
        guard fresh.lookup != nil, !fresh.data.isEmpty else { throw VaultErrorText.noActiveKey }
        keys.withLock { $0 = fresh }
    }

    /// The data key new rows are sealed under (the active one with the highest id whose wrap does not
    /// say it was retired), locked `FOR SHARE` until the transaction ends, so a rewrap cannot retire
    /// it while this transaction writes with it.
    func activeDataKey(_ connection: PostgresConnection, logger: Logger) async throws -> (Int32, SecureBytes) {
        // Chosen, then locked and checked still active: a rewrap may retire it in between (READ
        // COMMITTED shows the committed table to each statement), and then the choice is made again.
        for _ in 0..<3 {
            let ids = try await connection.query(
                "SELECT key_id FROM sortedvault_keys WHERE purpose = 'data' AND state = 'active' ORDER BY key_id DESC",
                logger: logger).collect().map { try $0.decode(Int32.self) }
            guard !ids.isEmpty else { continue }
            if ids.contains(where: { dataKey($0) == nil }) { try await reload(connection, logger: logger) }
            let retired = keys.withLock { $0.retired }
            guard let id = ids.first(where: { !retired.contains($0) }), let key = dataKey(id) else {
                let reactivated = ids[0]
                integrity.failed("sortedvault_keys", row: String(reactivated),
                                 "data key \(reactivated) is marked active but a rewrap retired it; nothing is written under it")
                throw VaultErrorText.retiredKeyReactivated(reactivated)
            }
            let locked = try await connection.query(
                "SELECT key_id FROM sortedvault_keys WHERE key_id = \(id) AND purpose = 'data' AND state = 'active' FOR SHARE",
                logger: logger).collect()
            if !locked.isEmpty { return (id, key) }
        }
        throw VaultErrorText.noActiveKey
    }

    /// Retires data key `id`: its state, and its wrap sealed again with `retired` in the associated
    /// data, in one statement, so the state cannot be set back to `active` by hand unnoticed.
    func retire(_ id: Int32, _ connection: PostgresConnection, logger: Logger) async throws {
        if dataKey(id) == nil { try await reload(connection, logger: logger) }
        guard let key = dataKey(id) else { throw VaultErrorText.unknownKey(id) }
        let wrapped = try AEAD.seal(key, key: master, associatedData: Self.wrapping(purpose: "data", id: id, retired: true))
        try await connection.query(
            "UPDATE sortedvault_keys SET state = 'retired', wrapped = \(ByteBuffer(bytes: wrapped)) WHERE purpose = 'data' AND key_id = \(id)",
            logger: logger)
        // Never written under again by this daemon either (a newer key exists: the rewrap added it).
        keys.withLock { _ = $0.retired.insert(id) }
    }

    /// Seals the retirement of data keys retired before it was sealed (their wrap opens as an active
    /// key's). Run at start-up, inside the migration transaction, under its lock.
    func sealRetirements(_ connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query(
            "SELECT key_id, wrapped FROM sortedvault_keys WHERE purpose = 'data' AND state = 'retired'", logger: logger).collect()
        for row in rows {
            let (id, wrapped) = try row.decode((Int32, ByteBuffer).self)
            guard let key = try? AEAD.open(Array(wrapped.readableBytesView), key: master,
                                           associatedData: Self.wrapping(purpose: "data", id: id)) else { continue }
            let resealed = try AEAD.seal(key, key: master, associatedData: Self.wrapping(purpose: "data", id: id, retired: true))
            try await connection.query(
                "UPDATE sortedvault_keys SET wrapped = \(ByteBuffer(bytes: resealed)) WHERE key_id = \(id)", logger: logger)
        }
    }

    /// What a wrapped key is bound to: its purpose and id, so one key's wrapping cannot stand in for another's.
    /// A retired data key's wrap adds `0 ‖ "retired"`; an active key's is the original one.
    private static func wrapping(purpose: String, id: Int32, retired: Bool = false) -> [UInt8] {
        Array("sortedvault fleet key v1".utf8) + [0] + Array(purpose.utf8) + [0] + RowSeal.bigEndian(Int64(id))
            + (retired ? [0] + Array("retired".utf8) : [])
    }
}
