import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    @Suite struct RewrapTests {
        @Test func rewrapMovesEveryRowToANewKeyWhileReadsAndWritesGoOn() async throws {
            let database = try FleetDatabase.fresh()
            let master = masterKey()
            let count = 120
            try await database.withStore(master: master) { store in
                for index in 0..<count {
                    try await store.store(SecureBytes(copying: [UInt8(index)]), service: "rw", account: "a\(index)")
                }
            }
            let stop = Locked(false)
            let reads = Locked(0)
            let failures = Locked(0)
            // A second daemon reads and writes throughout; the first rewraps.
            let report = try await database.withStore(master: master) { other in
                try await database.withStore(master: master) { rewrapper in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            var index = 0
                            while !stop.withLock { $0 } {
                                index = (index + 37) % count
                                do {
                                    let item = try await other.retrieve(service: "rw", account: "a\(index)")
                                    if !item.secret.constantTimeEquals([UInt8(index)]) { failures.withLock { $0 += 1 } }
                                } catch {
                                    failures.withLock { $0 += 1 }
                                }
                                reads.withLock { $0 += 1 }
                            }
                        }
                        group.addTask {
                            var round = 0
                            while !stop.withLock { $0 } {
                                round += 1
                                try await other.store(SecureBytes(copying: [UInt8(round % 256)]), service: "rw-writes", account: "w\(round % 10)")
                            }
                        }
                        defer { stop.withLock { $0 = true } }
                        return try await rewrapper.rewrap(batchSize: 16)
                    }
                }
            }
            #expect(failures.withLock { $0 } == 0)
            #expect(reads.withLock { $0 } > 0)
            #expect(report.keyID == 2 && report.retiredKeyIDs == [1] && report.rows >= count)
            let keyIDs = Set(try await database.sql("SELECT key_id FROM sortedvault_items").map { try $0.decode(Int32.self) })
            #expect(keyIDs == [2])
            let states = try await database.sql("SELECT key_id, state FROM sortedvault_keys WHERE purpose = 'data' ORDER BY key_id")
                .map { try $0.decode((Int32, String).self) }
            #expect(states.map(\.0) == [1, 2] && states.map(\.1) == ["retired", "active"])
            try await database.withStore(master: master) { store throws in
                for index in [0, 59, 119] {
                    #expect(try await store.retrieve(service: "rw", account: "a\(index)").secret.constantTimeEquals([UInt8(index)]))
                }
            }
        }
    }
}
