import ArgumentParser
import VaultCore

@_exported import CLICore

/// The documented exit codes (``ExitStatus``, shared with the lean `sortedvault` front) for vault errors.
extension ExitStatus {
    public init(_ code: VaultError.Code) {
        switch code {
        case .notFound: self = .notFound
        case .locked: self = .locked
        case .permissionDenied: self = .permissionDenied
        case .unavailable: self = .daemonUnreachable
        case .wrongPassphrase, .keySourceRejected: self = .wrongPassphrase
        case .integrityFailure: self = .integrityFailure
        case .invalidArgument: self = .usage
        default: self = .failure
        }
    }
}

/// Prints `message` to stderr as `sortedvault: message` and exits with `status`.
public func fail(_ message: String, _ status: ExitStatus) -> ExitCode {
    StandardStreams.reportError(message)
    return ExitCode(status.rawValue)
}

/// A command whose failures are reported the one way: a `VaultError` or a ``WireFailure`` that
/// ``perform()`` throws becomes `sortedvault: MESSAGE` on standard error and the documented exit code.
public protocol ReportingCommand: AsyncParsableCommand {
    func perform() async throws
}

extension ReportingCommand {
    public func run() async throws {
        try await reportingErrors { try await perform() }
    }
}

/// Runs a command body, turning a `VaultError` or a ``WireFailure`` into its message and exit code.
public func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as VaultError {
        throw fail(error.reason, ExitStatus(error.code))
    } catch let error as WireFailure {
        throw fail(error.message, error.status)
    }
}
