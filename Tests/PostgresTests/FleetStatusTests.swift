import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultPostgres
import VaultTesting

extension PostgresSuite {
    /// The numbers `sortedvault fleet status` shows of a fleet's database, read from clear columns.
    @Suite struct FleetStatusTests {
        @Test func aLostAnswerMakesALoginInDoubtUntilARefreshIsStored() async throws {
            let database = try FleetDatabase.fresh()
            let item = try ItemKey(service: "sortedvault/session/login", account: "ada")
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                guard case .granted(let lease, _) = try await store.claimRefresh(of: item, owner: "a", duration: 600) else {
                    Issue.record("the first claim was not granted")
                    return
                }
                #expect(try await store.loginsInDoubt() == 0, "a refresh under way is not in doubt")
                try await store.release(lease, answerLost: true)
                #expect(try await store.loginsInDoubt() == 1)
                guard case .granted(let retry, _) = try await store.claimRefresh(of: item, owner: "a", duration: 600) else {
                    Issue.record("the retry's claim was not granted")
                    return
                }
                #expect(try await store.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: retry))
                #expect(try await store.loginsInDoubt() == 0)
            }
        }

        @Test func dataKeysInUseCountRowsAndQueuedRevocationsAndFollowARewrap() async throws {
            let database = try FleetDatabase.fresh()
            let item = try ItemKey(service: "sortedvault/session/login", account: "ada")
            try await database.withStore(master: masterKey()) { store in
                try await store.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
                try await store.store(SecureBytes(copying: [1]), for: try ItemKey(service: "s", account: "b"), options: StoreOptions())
                _ = try await store.enqueueRevocation(SecureBytes(copying: [2]), for: item, wiping: true, holdFor: 0,
                                                      discardAfter: Date(timeIntervalSinceReferenceDate: 4_000_000_000))
                #expect(try await store.dataKeysInUse() == [DataKeyUse(id: 1, rows: 2)])
                let report = try await store.rewrap(batchSize: 1)
                #expect(try await store.dataKeysInUse() == [DataKeyUse(id: Int(report.keyID), rows: 2)])
            }
        }
    }
}
