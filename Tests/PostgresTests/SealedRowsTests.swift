import Foundation
import PostgresNIO
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// What the database holds is ciphertext bound to its row: a DBA reads nothing, and bytes moved
    /// between rows, generations or keys do not open.
    @Suite struct SealedRowsTests {
        @Test func aDatabaseAdministratorSeesNeitherSecretsNorNames() async throws {
            let database = try FleetDatabase.fresh()
            let secret = "refresh-token-7f3a9c-SECRET"
            let names = ["com.example.payroll-api", "ada.lovelace@example.com", "Payroll (Ada)", "scope-offline-access"]
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: Array(secret.utf8)), service: names[0], account: names[1],
                                      options: try StoreOptions(label: names[2], attributes: ["scope": names[3]]))
                _ = try await store.retrieve(service: names[0], account: names[1])
            }
            var seen: [UInt8] = []
            for table in ["sortedvault_items", "sortedvault_keys", "sortedvault_outbox", "sortedvault_schema"] {
                // Every column of every row, as the server renders it for a SELECT *, and bytea raw.
                for row in try await database.sql(PostgresQuery(unsafeSQL: "SELECT row_to_json(t)::text FROM \(table) t")) {
                    seen += Array(try row.decode(String.self).utf8)
                }
            }
            for row in try await database.sql("SELECT lookup, sealed_metadata, sealed_secret FROM sortedvault_items") {
                let (a, b, c) = try row.decode((ByteBuffer, ByteBuffer, ByteBuffer).self)
                seen += Array(a.readableBytesView) + Array(b.readableBytesView) + Array(c.readableBytesView)
            }
            #expect(seen.count > 1000, "the rows were not read")
            for plaintext in [secret] + names {
                let needle = Array(plaintext.utf8)
                let hex = Array(needle.map { String(format: "%02x", $0) }.joined().utf8)
                #expect(!contains(seen, needle) && !contains(seen, hex), "the database shows \(plaintext.debugDescription)")
            }
        }

        @Test func aCiphertextSwappedBetweenTwoRowsFailsToOpen() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: [1, 1, 1]), service: "svc", account: "first")
                try await store.store(SecureBytes(copying: [2, 2, 2]), service: "svc", account: "second")
                try await store.store(SecureBytes(copying: [3, 3, 3]), service: "svc", account: "untouched")
                // The two oldest rows trade their sealed secrets, as a DBA with UPDATE rights could.
                let pair = try await database.sql("SELECT lookup, sealed_secret FROM sortedvault_items ORDER BY generation LIMIT 2")
                let (firstLookup, firstSecret) = try pair[0].decode((ByteBuffer, ByteBuffer).self)
                let (secondLookup, secondSecret) = try pair[1].decode((ByteBuffer, ByteBuffer).self)
                _ = try await database.sql("UPDATE sortedvault_items SET sealed_secret = \(secondSecret) WHERE lookup = \(firstLookup)")
                _ = try await database.sql("UPDATE sortedvault_items SET sealed_secret = \(firstSecret) WHERE lookup = \(secondLookup)")
                for account in ["first", "second"] {
                    await expectError(.integrityFailure) { try await store.retrieve(service: "svc", account: account) }
                }
                #expect(try await store.retrieve(service: "svc", account: "untouched").secret.constantTimeEquals([3, 3, 3]))
            }
        }

        @Test func anOlderGenerationCopiedBackFailsToOpen() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: Array("old".utf8)), service: "svc", account: "a")
                let old = try #require(try await database.sql("SELECT sealed_metadata, sealed_secret FROM sortedvault_items").first)
                let (oldMetadata, oldSecret) = try old.decode((ByteBuffer, ByteBuffer).self)
                try await store.store(SecureBytes(copying: Array("new".utf8)), service: "svc", account: "a")
                _ = try await database.sql("UPDATE sortedvault_items SET sealed_metadata = \(oldMetadata), sealed_secret = \(oldSecret)")
                await expectError(.integrityFailure) { try await store.retrieve(service: "svc", account: "a") }
            }
        }

        @Test func aRowRelabelledWithAnotherKeyIDFailsToOpen() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: [1]), service: "svc", account: "a")
                _ = try await store.rewrap(batchSize: 10)   // key 2 active, key 1 retired and still listed
                try await store.store(SecureBytes(copying: [2]), service: "svc", account: "b")
                _ = try await database.sql("UPDATE sortedvault_items SET key_id = 1")
                for account in ["a", "b"] {
                    await expectError(.integrityFailure) { try await store.retrieve(service: "svc", account: account) }
                }
            }
        }

        @Test func anotherMasterKeyDoesNotOpenTheFleetsKeys() async throws {
            let database = try FleetDatabase.fresh()
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: [1]), service: "svc", account: "a")
            }
            await expectError(.wrongPassphrase) { try await database.withStore(master: masterKey()) { _ in } }
        }
    }
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}
