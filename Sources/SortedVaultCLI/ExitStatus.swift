import ArgumentParser
import Foundation
import VaultCore
import VaultProtocol

/// The documented exit codes; scripts branch on them.
public enum ExitStatus: Int32 {
    case success = 0
    case notFound = 1
    case locked = 2
    case permissionDenied = 3
    case daemonUnreachable = 4
    case wrongPassphrase = 5
    case integrityFailure = 6
    case failure = 7
    /// `session autologin|refresh`: the user must sign in again.
    case reauthRequired = 8
    /// `session autologin|refresh`: the provider is unreachable; a still-valid token was printed, if any.
    case offline = 9
    case usage = 64

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
    FileHandle.standardError.write(Data("sortedvault: \(message)\n".utf8))
    return ExitCode(status.rawValue)
}

/// Runs a command body, turning a `VaultError` into its message and exit code.
public func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as VaultError {
        throw fail(error.reason, ExitStatus(error.code))
    } catch let error as PathError {
        throw fail(error.description, .usage)
    }
}
