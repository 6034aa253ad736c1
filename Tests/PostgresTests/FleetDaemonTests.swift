import BoundedJSON
import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession
import VaultTesting

extension PostgresSuite {
    /// Real daemon processes with `backend = "postgresql"`, over their sockets, sharing one database
    /// of a real PostgreSQL: what one daemon writes, another reads.
    @Suite struct FleetDaemonTests {
        static let key = try! ItemKey(service: "com.sorted.api", account: "ada")

        @Test func anItemStoredThroughOneDaemonIsReadAndDeletedThroughAnother() async throws {
            let fleet = try FleetDaemons(count: 2, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            try await fleet.items(0).store(SecureBytes(copying: Array("s3cret".utf8)), service: "fleet.api", account: "ada",
                                           options: try StoreOptions(label: "shared"))
            let item = try await fleet.items(1).retrieve(service: "fleet.api", account: "ada")
            #expect(item.secret.constantTimeEquals(Array("s3cret".utf8)))
            #expect(item.metadata.label == "shared")
            #expect(try await fleet.items(1).list(service: "fleet.api").map(\.account) == ["ada"])
            try await fleet.items(1).delete(service: "fleet.api", account: "ada")
            await #expect(throws: VaultError.self) { try await fleet.items(0).retrieve(service: "fleet.api", account: "ada") }
            let status = try await fleet.items(0).status()
            #expect(status.locked == false)
        }

        /// Every host needs the fleet's one key file: without it, or with another, a daemon refuses to
        /// start and says what to do (no `sortedvault init`).
        @Test func aDaemonWithoutTheFleetsKeyFileRefusesToStartSayingWhatItNeeds() async throws {
            let fleet = try FleetDaemons(count: 2, database: try FleetDatabase.fresh(), start: false)
            defer { fleet.stopAll() }
            try fleet.start(0)   // creates the fleet's keys under fleet.keyFile
            let otherKey = fleet.hosts[1].root + "/other.key"
            let settings = fleet.hosts[1].configDir + "/policy/settings.toml"
            try fleet.settingsText.replacingOccurrences(of: fleet.keyFile, with: otherKey)
                .write(toFile: settings, atomically: false, encoding: .utf8)

            let missing = "\(try #require(throws: HarnessError.self) { try fleet.start(1) })"
            #expect(missing.contains("[postgresql] key_file") && missing.contains("needs no `sortedvault init`"), "\(missing)")

            #expect(FileManager.default.createFile(atPath: otherKey, contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }),
                                                   attributes: [.posixPermissions: 0o600]))
            let wrong = "\(try #require(throws: HarnessError.self) { try fleet.start(1) })"
            #expect(wrong.contains("every host of a fleet needs the same key file"), "\(wrong)")
        }

        /// `sortedvault daemon` runs the one-host daemon (`sortedvault-cli daemon`), which links no
        /// database client: for settings with `backend = "postgresql"` it runs sortedvault-fleet-daemon
        /// from beside it, with the same arguments, and without that program it says which is missing.
        @Test func aFleetsSettingsRunTheFleetDaemonAndWithoutItTheMissingProgramIsNamed() async throws {
            let fleet = try FleetDaemons(count: 1, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let host = fleet.hosts[0]
            let programs = host.processesOfThisWorld().compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\($0)/exe") }
            #expect(programs.contains { $0.hasSuffix("/sortedvault-fleet-daemon") }, "\(programs)")
            #expect(!programs.contains { $0.hasSuffix("/sortedvault-cli") }, "\(programs)")
            try await fleet.items(0).store(SecureBytes(copying: [1]), service: "fleet.api", account: "served")
            fleet.stopAll()

            let alone = host.root + "/alone"
            try FileManager.default.createDirectory(atPath: alone, withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: try CLIHarness.sibling("sortedvault-cli"), toPath: alone + "/sortedvault-cli")
            let (status, _, errors) = try Subprocess.run([alone + "/sortedvault-cli", "daemon"], environment: host.environment, input: Data())
            let refused = String(decoding: errors, as: UTF8.self)
            #expect(status != 0)
            #expect(refused.contains("backend = \"postgresql\"") && refused.contains("sortedvault-fleet-daemon")
                    && refused.contains("no executable \(alone)/sortedvault-fleet-daemon"), "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: host.socket), "the refused daemon left a socket")
        }

        @Test func lockingAFleetDaemonIsRefusedNamingTheBackend() async throws {
            let fleet = try FleetDaemons(count: 1, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let error = await #expect(throws: VaultError.self) { try await fleet.items(0).lockVault() }
            #expect(error?.reason.contains("backend = \"postgresql\"") == true, "\(String(describing: error))")
            // Still serving, unlocked.
            try await fleet.items(0).store(SecureBytes(copying: [1]), service: "fleet.api", account: "after-lock")
        }

        @Test func aLoginSavedThroughOneDaemonAutoLoginsThroughAnother() async throws {
            let fleet = try FleetDaemons(count: 2, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let provider = try OAuthTestProvider()
            let accessToken = try await Self.signIn(fleet.sessions(0), provider)
            guard case .valid(let grant) = try await fleet.sessions(1).autoLogin(Self.key) else {
                Issue.record("the login saved on daemon A is not valid on daemon B")
                return
            }
            #expect(grant.accessToken.constantTimeEquals(Array(accessToken.utf8)))
            #expect(try await provider.refreshRequests() == 0)
        }

        /// With PostgreSQL stopped, calls are answered (AutoLogin `offline`, Retrieve a storage
        /// error) once the daemon's injected clock passes the call deadline — never a hang; after
        /// PostgreSQL is started again, the same calls work.
        @Test func aStoppedDatabaseGivesOfflineAndAStorageErrorThenCallsWorkAgainAfterStart() async throws {
            let server = try PostgresServer.start()   // its own server: this test stops it
            defer { server.stop() }
            let fleet = try FleetDaemons(count: 2, database: FleetDatabase(server: server, name: try server.createDatabase()),
                                         callDeadlineSeconds: 10)
            defer { fleet.stopAll() }
            let provider = try OAuthTestProvider()
            _ = try await Self.signIn(fleet.sessions(0), provider)
            try await fleet.items(0).store(SecureBytes(copying: [7]), service: "fleet.api", account: "ada")

            try server.shutDown()
            let autoLogin = Task { try await fleet.sessions(0).autoLogin(Self.key) }
            let retrieve = Task { () async -> VaultError? in
                do { _ = try await fleet.items(0).retrieve(service: "fleet.api", account: "ada"); return nil }
                catch let error as VaultError { return error }
                catch { return VaultError(.daemonFailed, "\(error)") }
            }
            // Each step moves the daemons' clock past the deadline of every call waiting by then.
            let ticker = Task {
                while !Task.isCancelled {
                    fleet.clock.advance(by: TimeInterval(fleet.callDeadlineSeconds + 1))
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
            let outcome = try await autoLogin.value
            let failure = await retrieve.value
            ticker.cancel()
            guard case .offline = outcome else {
                Issue.record("AutoLogin with the database stopped answered \(outcome.outcome), not offline")
                return
            }
            let error = try #require(failure, "Retrieve succeeded with the database stopped")
            #expect(error.code == .storageFailure, "\(error)")
            #expect(error.reason.contains("database"), "\(error.reason)")

            try server.startUp()
            // The pools reconnect with a backoff of their own (real time): ask until they have.
            var item: RetrievedItem?
            for _ in 0..<240 where item == nil {
                item = try? await fleet.items(0).retrieve(service: "fleet.api", account: "ada")
                if item == nil {
                    fleet.clock.advance(by: TimeInterval(fleet.callDeadlineSeconds + 1))
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
            #expect(item?.secret.constantTimeEquals([7]) == true)
            var result: AutoLoginResult?
            for _ in 0..<240 {
                result = try await fleet.sessions(1).autoLogin(Self.key)
                if case .valid = result { break }
                fleet.clock.advance(by: TimeInterval(fleet.callDeadlineSeconds + 1))
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(result?.outcome == "valid")
        }

        /// Signs in at the provider and saves the login through `sessions`; returns the access token.
        static func signIn(_ sessions: SessionClient, _ provider: ProviderServer, key: ItemKey = key) async throws -> String {
            let response = try await provider.signIn()
            guard case .object(let object) = try JSONValue.parse(response), let token = object["access_token"]?.stringValue else {
                throw HarnessError("bad token response")
            }
            try await sessions.save(tokenResponse: object, provider: try FleetProvider.settings(of: provider), for: key)
            return token
        }
    }
}
