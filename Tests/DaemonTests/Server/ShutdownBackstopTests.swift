import Foundation
import Logging
import ServiceLifecycle
import Testing
@testable import VaultDaemon

/// SIGTERM ends the daemon within its shutdown limit whatever still waits (issue 34, point 13a). A
/// wait that ignores cancellation could not be reproduced on demand (a fleet daemon whose database
/// connections were stopped with SIGSTOP still shut down in 2 s), so the backstop is checked on its
/// own, in a process of its own (an exit test): a service group whose one service blocks its
/// shutdown for a minute, ignoring cancellation, is ended by the backstop with status 1; without
/// the backstop the process would exit 0 after that minute.
@Suite(.timeLimit(.minutes(20))) struct ShutdownBackstopTests {
    @Test func aShutdownThatDoesNotFinishEndsTheProcessAtTheLimit() async {
        await #expect(processExitsWith: .exitCode(1)) {
            let logger = Logger(label: "backstop-test")
            let backstop = ShutdownBackstop(limit: .milliseconds(500), logger: logger, abandon: {})
            var configuration = ServiceGroupConfiguration(services: [
                .init(service: BlockedShutdown()),
                .init(service: ShutdownAtOnce(), successTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: backstop),
            ], logger: logger)
            configuration.maximumGracefulShutdownDuration = .milliseconds(100)
            try? await ServiceGroup(configuration: configuration).run()
        }
    }
}

/// Ends at once, which (configured `.gracefullyShutdownGroup`) begins the group's shutdown.
private struct ShutdownAtOnce: Service {
    func run() async throws {}
}

/// At shutdown, blocks a thread for a minute and ignores cancellation, as a query on a connection
/// that went silent does.
private struct BlockedShutdown: Service {
    func run() async throws {
        try? await gracefulShutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                Thread.sleep(forTimeInterval: 60)
                continuation.resume()
            }.start()
        }
    }
}
