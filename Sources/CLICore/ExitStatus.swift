import VaultAPI

/// The documented exit codes; scripts branch on them. Shared by the lean `sortedvault` front and
/// the full command tree (`sortedvault-cli`), which maps `VaultError` codes onto them.
public enum ExitStatus: Int32, Sendable {
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
}

/// The statuses of error replies, where their names differ from the reply's kinds.
extension ExitStatus: ErrorReplyCode {
    public static var invalidParameter: ExitStatus { .usage }
    public static var unsupported: ExitStatus { .daemonUnreachable }
    public static var providerRejected: ExitStatus { .failure }
    public static var callbackMismatch: ExitStatus { .failure }
}
