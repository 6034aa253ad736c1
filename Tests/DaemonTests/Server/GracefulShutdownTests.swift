import Foundation
import TestSupport
import Testing
import VaultClient

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// SIGTERM and SIGINT are the daemon's graceful shutdown signals (its service group's
    /// `gracefulShutdownSignals`): the server stops first, closing the connection of a call still
    /// in flight, and the daemon exits 0 with its socket removed — without waiting for the call.
    @Suite struct GracefulShutdownTests {
        @Test(arguments: [SIGTERM, SIGINT])
        func aSignalStopsADaemonWithASlowCallInFlightCleanly(signal: Int32) async throws {
            let world = try SessionDaemonTests.World()
            try await world.signIn()
            world.clock.advance(by: 3600)  // the access token has expired: Refresh goes to the provider
            try await world.provider.control("/test/delay", ["seconds": 30])  // which holds its answer 30 s
            let sessions = world.sessions, key = world.key
            let refresh = Task { try await sessions.refresh(key) }
            let deadline = Date().addingTimeInterval(600)
            while try await world.provider.refreshResponses(200) == 0 && Date() < deadline { usleep(20_000) }
            #expect(try await world.provider.refreshResponses(200) == 1, "the refresh never reached the provider")

            let signalled = ContinuousClock.now
            let status = world.cli.stopDaemon(with: signal)
            let took = ContinuousClock.now - signalled
            #expect(status == 0, "signal \(signal): exit status \(status): \(world.cli.daemonOutput())")
            #expect(took < .seconds(15), "the daemon waited \(took) for the held call instead of closing it")
            #expect(!FileManager.default.fileExists(atPath: world.cli.socket), "the socket was not removed")
            #expect(world.cli.daemonOutput().contains("stopped"), "no clean shutdown: \(world.cli.daemonOutput())")
            // The call in flight ends with a clean close (an error), or its reply: never a hang.
            let ended = await refresh.result
            if case .success(let result) = ended { #expect(!result.outcome.isEmpty) }
        }
    }
}
