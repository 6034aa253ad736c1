import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// Several daemons, one database: each with its own pool, the same master key.
    @Suite struct FleetSharingTests {
        @Test func twoDaemonsSeeEachOthersWrites() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await database.withStore(master: master) { a in
                try await database.withStore(master: master) { b in
                    try await a.store(SecureBytes(copying: [1, 2, 3]), service: "api", account: "ada")
                    #expect(try await b.retrieve(service: "api", account: "ada").secret.constantTimeEquals([1, 2, 3]))
                    try await b.store(SecureBytes(copying: [4]), service: "api", account: "ada")
                    #expect(try await a.retrieve(service: "api", account: "ada").secret.constantTimeEquals([4]))
                    try await b.store(SecureBytes(copying: [5]), service: "api", account: "bob")
                    #expect(try await a.list(service: "api").map(\.account) == ["ada", "bob"])
                    try await a.delete(service: "api", account: "ada")
                    await expectError(.notFound) { try await b.retrieve(service: "api", account: "ada") }
                    await expectError(.notFound) { try await b.delete(service: "api", account: "ada") }
                }
            }
        }

        @Test func daemonsStartingTogetherMigrateOnceAndAgreeOnKeys() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<4 {
                    group.addTask {
                        try await database.withStore(master: master) { store in
                            try await store.store(SecureBytes(copying: [UInt8(index)]), service: "start", account: "daemon-\(index)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Each migration applied once, however many daemons raced to it.
            let versions = try await database.sql("SELECT version FROM sortedvault_schema ORDER BY version").map { try $0.decode(Int32.self) }
            #expect(versions == [1, 2, 3, 4])
            let keys = try await database.sql("SELECT purpose, key_id FROM sortedvault_keys ORDER BY key_id").map { try $0.decode((String, Int32).self) }
            #expect(keys.map(\.0) == ["lookup", "data"] && keys.map(\.1) == [0, 1])
            try await database.withStore(master: master) { store throws in
                #expect(try await store.list(service: "start").count == 4)
                for index in 0..<4 {
                    #expect(try await store.retrieve(service: "start", account: "daemon-\(index)").secret.constantTimeEquals([UInt8(index)]))
                }
            }
        }

        @Test func expiredRowsArePurgedFromTheDatabase() async throws {
            let database = try FleetDatabase.fresh()
            let clock = ManualClock()
            try await database.withStore(master: masterKey(), clock: clock) { store in
                try await store.store(SecureBytes(copying: [1]), service: "exp", account: "soon",
                                      options: try StoreOptions(expiresAt: clock.now.addingTimeInterval(10)))
                try await store.store(SecureBytes(copying: [2]), service: "exp", account: "never")
                clock.advance(by: 10)
                await expectError(.notFound) { try await store.retrieve(service: "exp", account: "soon") }
                #expect(try await database.sql("SELECT 1 FROM sortedvault_items").count == 1)
            }
        }
    }
}
