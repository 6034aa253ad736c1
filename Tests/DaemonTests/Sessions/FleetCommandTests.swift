import BoundedJSON
import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultSession

extension DaemonSuite {
    /// `sortedvault fleet revoke` and `fleet status` through the real daemon (one host, SQLite) and
    /// its socket, against the real OAuth2 provider.
    @Suite struct FleetCommandTests {
        typealias World = SessionDaemonTests.World

        /// Signs `account` of `service` in at the provider through the socket; returns its access token.
        static func signIn(_ world: World, _ service: String, _ account: String) async throws -> String {
            let response = try await world.provider.signIn()
            guard case .object(let object) = try JSONValue.parse(response) else { throw HarnessError("bad token response") }
            try await world.sessions.save(tokenResponse: object, provider: try world.provider.provider(),
                                          for: try ItemKey(service: service, account: account))
            return try #require(response.jsonField("access_token"))
        }

        @Test func revokeLogsOutEveryLoginOfTheServiceAndStatusShowsWhatIsLeftQueued() async throws {
            let world = try World()
            defer { world.cli.stopDaemon() }
            let ada = try await Self.signIn(world, "com.sorted.api", "ada")
            let bob = try await Self.signIn(world, "com.sorted.api", "bob")
            let other = try await Self.signIn(world, "com.sorted.other", "eve")

            let revoked = try world.cli.run(["fleet", "revoke", "--service", "com.sorted.api"])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            #expect(revoked.text.contains("logged out 2 logins; the provider revoked 2; 0 revocations queued"), "\(revoked.text)")
            #expect(try await world.provider.isActive(ada) == false)
            #expect(try await world.provider.isActive(bob) == false)
            #expect(try await world.provider.isActive(other))
            #expect(try await world.sessions.list().map { "\($0.service)/\($0.account)" } == ["com.sorted.other/eve"])

            // The provider is down: the login is wiped all the same, its revocation queued.
            _ = try await Self.signIn(world, "com.sorted.api", "ada")
            world.provider.stop()
            let queued = try world.cli.run(["fleet", "revoke", "--service", "com.sorted.api"])
            #expect(queued.status == 0, "\(queued.stderr)")
            #expect(queued.text.contains("logged out 1 login; the provider revoked 0; 1 revocation queued"), "\(queued.text)")
            #expect(try await world.sessions.list(service: "com.sorted.api").isEmpty)

            let status = try await world.sessions.fleetStatus()
            #expect(status.revocations.pending == 1 && status.revocations.stuck == 0 && status.revocations.oldestAge != nil)
            #expect(status.loginsInDoubt == 0 && status.stuckAfter == 10)
            #expect(status.dataKeys == nil, "a one-host vault has no numbered data keys")
            let printed = try world.cli.run(["fleet", "status"])
            #expect(printed.status == 0, "\(printed.stderr)")
            #expect(printed.text.contains("revocations pending: 1\n") && printed.text.contains("revocations stuck (10+ failed attempts): 0\n")
                    && printed.text.contains("logins in doubt: 0\n"), "\(printed.text)")
            let json = try world.cli.run(["fleet", "status", "--json"])
            let reply = try JSONValue.parse(Array(json.text.utf8)).objectValue
            #expect(reply?["pendingRevocations"]?.intValue == 1 && reply?["dataKeys"] == nil, "\(json.text)")
        }

        @Test func rewrapOnAOneHostDaemonSaysItIsNotAFleetStore() async throws {
            let world = try World()
            defer { world.cli.stopDaemon() }
            let rewrap = try world.cli.run(["fleet", "rewrap"])
            #expect(rewrap.status == 4, "\(rewrap.stderr)")
            #expect(rewrap.stderr.contains("not a fleet store") && rewrap.stderr.contains("backend = \"postgresql\""), "\(rewrap.stderr)")
            #expect(rewrap.text.isEmpty)
        }

        @Test func bothCommandsNeedTheirOwnPolicyOperations() async throws {
            let world = try World(access: """
                [[rule]]
                name = "logins-only"
                effect = "allow"
                uids = ["@self"]
                operations = ["session.*"]
                services = ["*"]
                """)
            defer { world.cli.stopDaemon() }
            _ = try await Self.signIn(world, "com.sorted.api", "ada")
            let revoke = try world.cli.run(["fleet", "revoke", "--service", "com.sorted.api"])
            #expect(revoke.status == 3, "\(revoke.stderr)")
            #expect(try world.cli.run(["fleet", "status"]).status == 3)
            #expect(try world.cli.run(["fleet", "rewrap"]).status == 3)
            #expect(try await world.sessions.list(service: "com.sorted.api").count == 1, "a refused bulk logout wiped a login")
        }
    }
}
