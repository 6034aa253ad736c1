import Foundation
import TestSupport
import Testing
import VaultCore

extension DaemonSuite {
    /// `Status` counts what a user can list; logins and queued revocations, which `List` hides, are
    /// reported as their own numbers.
    @Suite struct StatusCountTests {
        @Test func statusCountsListableItemsAndReportsLoginsAndQueuedRevocationsApart() async throws {
            let world = try DaemonSuite.SessionDaemonTests.World()
            #expect(try world.cli.run(["store", "com.example.mail", "ada"], input: Data("pw".utf8)).status == 0)
            try await world.signIn()

            var status = try await world.cli.client.status()
            let listed = try await world.cli.client.list(service: nil)
            #expect(listed.count == 1)
            #expect(status.items == listed.count, "Status counted \(status.items) items, List shows \(listed.count)")
            #expect(status.logins == 1)
            #expect(status.queuedRevocations == 0)
            // Every access-log line so far was written, and the daemon says so.
            #expect(status.accessLogFailedWrites == 0)
            let printed = try world.cli.run(["status"]).text
            #expect(printed.contains("items: 1\n") && printed.contains("logins: 1\n") && printed.contains("queued revocations: 0\n"),
                    "sortedvault status printed: \(printed)")

            // The provider is down: the logout's revocation is queued, an internal record too.
            world.provider.stop()
            let logout = try await world.sessions.logout(world.key)
            #expect(logout.revocationQueued)
            status = try await world.cli.client.status()
            #expect(status.items == 1)
            #expect(status.logins == 0)
            #expect(status.queuedRevocations == 1)

            // Locked, names are sealed: every record is counted and the kinds are unknown.
            #expect(try world.cli.run(["lock"]).status == 0)
            status = try await world.cli.client.status()
            #expect(status.items == 2 && status.logins == nil && status.queuedRevocations == nil)
            #expect(try world.cli.run(["status"]).text.contains("the vault is locked"))
            world.cli.stopDaemon()
        }
    }
}
