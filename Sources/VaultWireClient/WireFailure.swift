import BoundedJSON
import VaultAPI

/// What the CLI prints (`sortedvault: MESSAGE` on standard error) and the status it exits with,
/// for an error reply or a failed call. An error reply is read by `ErrorReplyReport`, as
/// `VaultClient` reads it; transport failures have the texts of `VaultClient`'s, mapped through
/// `ExitStatus`. `WireFailureParityTests` checks that both clients report the same.
public struct WireFailure: Error, Equatable {
    public let status: ExitStatus
    public let message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// An error reply of `org.sortedvault.vault` (or of varlink itself).
    public static func vault(_ name: String, _ parameters: [String: JSONValue]) -> WireFailure {
        WireFailure(ErrorReplyReport.vault(name, parameters))
    }

    /// An error reply of `org.sortedvault.session`; anything else is read as the vault interface's.
    public static func session(_ name: String, _ parameters: [String: JSONValue]) -> WireFailure {
        WireFailure(ErrorReplyReport.session(name, parameters))
    }

    /// What the CLI prints for an error reply: the report's message, and the status of its kind.
    init(_ report: ErrorReplyReport) {
        let status: ExitStatus
        switch report.kind {
        case .notFound: status = .notFound
        case .locked: status = .locked
        case .permissionDenied: status = .permissionDenied
        case .invalidParameter: status = .usage
        case .wrongPassphrase: status = .wrongPassphrase
        case .integrityFailure: status = .integrityFailure
        case .unsupported: status = .daemonUnreachable
        case .providerRejected, .failure: status = .failure
        }
        self.init(status, report.message)
    }

    /// A call that got no reply.
    public static func transport(_ failure: TransportFailure, socketPath: String) -> WireFailure {
        switch failure {
        case .timedOut:
            return WireFailure(.daemonUnreachable, "the daemon at \(socketPath) did not answer in time")
        case .closed:
            return WireFailure(.daemonUnreachable,
                "the daemon at \(socketPath) closed the connection before answering: it stopped or crashed; check its log and try again")
        case .protocolViolation(let detail):
            return WireFailure(.failure, "the daemon at \(socketPath) broke the protocol: \(detail)")
        }
    }

    /// A reply that does not have the shape the method promises.
    public static func malformed(_ what: String) -> WireFailure {
        WireFailure(.failure, "the daemon sent a malformed \(what) reply")
    }
}
