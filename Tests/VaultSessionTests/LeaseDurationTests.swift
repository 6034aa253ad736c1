import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// The refresh lease outlives twice the provider's request deadline, or the manager is not made.
@Suite(.timeLimit(.minutes(20))) struct LeaseDurationTests {
    @Test func aLeaseShorterThanTwiceTheDeadlineIsAConfigurationError() throws {
        let clock = ManualClock()
        let transport = ScriptedOAuthTransport(requestDeadline: 20)
        let error = vaultError {
            _ = try SessionManager(store: InMemoryTokenStore(clock: clock), transport: transport, clock: clock,
                                   configuration: .init(refreshLease: 39))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.reason.contains("twice the provider request deadline") == true, "\(String(describing: error))")
        _ = try SessionManager(store: InMemoryTokenStore(clock: clock), transport: transport, clock: clock,
                               configuration: .init(refreshLease: 40))
    }
}
