import CLIOptions
import NIOPosix
import VaultDaemon

/// A command that does blocking work (key derivation, keyring calls) before it exits: its body runs
/// with the process's one pool (``BlockingWork``), shut down when the body ends, and its failures are
/// reported as every command's are.
public protocol BlockingWorkCommand: ReportingCommand {
    func perform(threadPool: NIOThreadPool) async throws
}

extension BlockingWorkCommand {
    public func perform() async throws {
        try await BlockingWork.withThreadPool { try await perform(threadPool: $0) }
    }
}
