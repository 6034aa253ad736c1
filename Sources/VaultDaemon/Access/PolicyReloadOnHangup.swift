import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the access policy on SIGHUP (what `sortedvault reload` sends), as sshd and nginx do:
/// connections stay open, and a policy that does not load leaves the one in force (``PolicySource``).
struct PolicyReloadOnHangup: Service {
    let source: PolicySource
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        try? await cancelWhenGracefulShutdown { [source, logger] in
            for await _ in hangups {
                source.reload(logger: logger)
            }
        }
    }
}
