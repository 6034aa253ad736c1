import Foundation
import NIOPosix
import Testing
import VaultCore
import VaultCrypto
import VaultSecretService

extension SecretServiceSuite {
    /// Items are plain Secret Service items: other tools see ours, and we see theirs.
    @Suite struct InteropTests {
        @Test func anItemStoredThroughSortedvaultIsReadBySecretToolLookup() async throws {
            let keyring = SharedKeyring.session
            let store = SecretServiceTokenStore(threadPool: .singleton)
            try await store.store(SecureBytes(copying: Array("tok-from-sortedvault ✓".utf8)), service: "com.sorted.api", account: "ada@example.com",
                                  options: try StoreOptions(label: "Sorted"))
            let lookup = try keyring.secretTool(["lookup", "service", "com.sorted.api", "account", "ada@example.com"])
            #expect(lookup.status == 0, "\(lookup.stderr)")
            #expect(lookup.stdout == Data("tok-from-sortedvault ✓".utf8))
            let search = try keyring.secretTool(["search", "service", "com.sorted.api", "account", "ada@example.com"])
            #expect(search.stderr.contains("xdg:schema = org.sortedvault.Item") || String(decoding: search.stdout, as: UTF8.self).contains("org.sortedvault.Item"))
            try await store.delete(service: "com.sorted.api", account: "ada@example.com")
            #expect(try keyring.secretTool(["lookup", "service", "com.sorted.api", "account", "ada@example.com"]).stdout.isEmpty)
        }

        @Test func anItemStoredWithSecretToolStoreIsReadBySortedvault() async throws {
            let keyring = SharedKeyring.session
            let stored = try keyring.secretTool(["store", "--label=From secret-tool", "service", "org.example.mail", "account", "bob", "host", "imap.example.org"],
                                                input: Data("tok-from-secret-tool".utf8))
            #expect(stored.status == 0, "\(stored.stderr)")
            let store = SecretServiceTokenStore(threadPool: .singleton)
            let item = try await store.retrieve(service: "org.example.mail", account: "bob")
            #expect(item.secret.constantTimeEquals(Array("tok-from-secret-tool".utf8)))
            #expect(item.metadata.label == "From secret-tool")
            #expect(item.metadata.attributes == ["host": "imap.example.org"])
            // Replacing it through sortedvault leaves one item, which secret-tool then reads.
            try await store.store(SecureBytes(copying: Array("replaced".utf8)), service: "org.example.mail", account: "bob")
            #expect(try keyring.secretTool(["lookup", "service", "org.example.mail", "account", "bob"]).stdout == Data("replaced".utf8))
            try await store.delete(service: "org.example.mail", account: "bob")
            await #expect(throws: VaultError(.notFound, "")) { try await store.retrieve(service: "org.example.mail", account: "bob") }
        }
    }

    /// This process reaches the shared keyring without its address in the environment, which every
    /// process it starts would inherit.
    @Suite struct SharedBusTests {
        @Test func theSharedKeyringIsReachedWithoutItsAddressInTheProcessEnvironment() async throws {
            let keyring = SharedKeyring.session
            let inherited = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
            #expect(inherited != keyring.busAddress, "every process this test process starts would reach the test keyring")
            let store = SecretServiceTokenStore(threadPool: .singleton)
            try await store.store(SecureBytes(copying: [7]), service: "shared-bus-test", account: "a")
            #expect(try keyring.secretTool(["lookup", "service", "shared-bus-test", "account", "a"]).stdout == Data([7]))
            try await store.delete(service: "shared-bus-test", account: "a")
        }
    }

    /// A locked collection is `.locked` — never `.notFound` — for items and for the vault key, and
    /// nothing prompts or hangs.
    @Suite struct LockedCollectionTests {
        @Test func aLockedCollectionGivesLockedNotNotFound() async throws {
            _ = SharedKeyring.session
            let store = SecretServiceTokenStore(threadPool: .singleton)
            let keys = SecretServiceKeySource(threadPool: .singleton)
            let keyID = SecretServiceKeySource.newKeyID()
            try await store.store(SecureBytes(copying: [1, 2, 3]), service: "locked-test", account: "present")
            try await keys.storeKey(SecureBytes(randomCount: 32), id: keyID, label: "test key")

            try await SecretServiceKeyring(threadPool: .singleton).lockDefaultCollection()
            // The keyring is shared by the suite: unlocked again however this test ends (a failed
            // `#require`, a thrown error, the early return below), so later tests do not find it locked.
            defer { try? SharedKeyring.unlockLoginCollection() }
            let started = ContinuousClock.now
            for account in ["present", "absent"] {
                do {
                    _ = try await store.retrieve(service: "locked-test", account: account)
                    Issue.record("retrieve of \(account) succeeded while the keyring was locked")
                } catch let error as VaultError {
                    #expect(error.code == .locked, "\(account): \(error.code) \(error.reason)")
                    #expect(error.reason.contains("desktop keyring") && error.reason.contains("locked"), "\(error.reason)")
                }
            }
            await #expect(throws: VaultError(.locked, "")) { try await keys.fetchKey(id: keyID) }
            await #expect(throws: VaultError(.locked, "")) { try await keys.fetchKey(id: SecretServiceKeySource.newKeyID()) }
            guard case .locked = await SecretServiceKeyring(threadPool: .singleton).availability() else {
                Issue.record("availability did not report the locked keyring")
                return
            }
            // A prompt would hold each call until D-Bus gives up (25 s), and there were several calls:
            // under half of one such wait, they were answered without one.
            #expect(ContinuousClock.now - started < .seconds(12), "a locked keyring made sortedvault wait (a prompt?)")

            try SharedKeyring.unlockLoginCollection()
            #expect(try await store.retrieve(service: "locked-test", account: "present").secret.constantTimeEquals([1, 2, 3]))
            await #expect(throws: VaultError(.notFound, "")) { try await store.retrieve(service: "locked-test", account: "absent") }
            #expect(try await keys.fetchKey(id: keyID).count == 32)
            await #expect(throws: VaultError(.notFound, "")) { try await keys.fetchKey(id: SecretServiceKeySource.newKeyID()) }
            try await keys.deleteKey(id: keyID)
            try await store.delete(service: "locked-test", account: "present")
        }
    }
}
