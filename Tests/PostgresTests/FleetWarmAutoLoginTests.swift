import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultSession

extension PostgresSuite {
    /// A fleet daemon answers AutoLogin of a login whose access token is valid from one read of the
    /// database: it neither joins nor starts a refresh, so a refresh of the same login that waits
    /// on the provider does not hold it back.
    @Suite struct FleetWarmAutoLoginTests {
        @Test func aValidLoginIsAnsweredWhileItsForcedRefreshWaitsOnTheProvider() async throws {
            let fleet = try FleetDaemons(count: 1, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let provider = try FleetProvider.strict.start()
            let key = FleetDaemonTests.key
            let signedIn = try await FleetDaemonTests.signIn(fleet.sessions(0), provider)
            // The provider holds every refresh until the test lets it go.
            try await provider.delay(seconds: 600)
            let forced = Task { try await fleet.sessions(0).refresh(key) }
            try await hangGuard {
                while try await provider.refreshRequests() < 1 { try await Task.sleep(for: .milliseconds(20)) }
            }
            // The refresh is out, its flight running in the daemon: AutoLogin still answers from the row.
            let warm = try await hangGuard(seconds: 120) { try await fleet.sessions(0).autoLogin(key) }
            guard case .valid(let grant) = warm else {
                Issue.record("a valid login was answered \(warm.outcome)")
                return
            }
            #expect(grant.accessToken.withUnsafeBytes { Array($0) } == Array(signedIn.utf8))
            try await provider.delay(seconds: 0)
            let refreshed = try await hangGuard(seconds: 600) { try await forced.value }
            #expect(refreshed.outcome == "refreshed")
            #expect(try await provider.refreshRequests() == 1)
        }
    }
}
