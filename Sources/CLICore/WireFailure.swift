import BoundedJSON
import VaultAPI

/// What the CLI prints (`sortedvault: MESSAGE` on standard error) and the status it exits with,
/// for an error reply or a failed call. An error reply is read by `ErrorReply`, as
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
        let (status, message) = ErrorReply.vault(name, parameters, as: ExitStatus.self)
        return WireFailure(status, message)
    }

    /// An error reply of `org.sortedvault.session`; anything else is read as the vault interface's.
    public static func session(_ name: String, _ parameters: [String: JSONValue]) -> WireFailure {
        let (status, message) = ErrorReply.session(name, parameters, as: ExitStatus.self)
        return WireFailure(status, message)
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

extension WireConnection {
    /// The connection to the daemon at `path`, or nil when none answers there; throws (exit 3) when
    /// something answers that is not this user's daemon. Each call waits as long as a session call
    /// may take (``SessionDeadlines/clientWait``), so AutoLogin hears the daemon's own answer.
    public static func toDaemon(at path: String) throws(WireFailure) -> WireConnection? {
        do {
            return try WireConnection(path: path, timeoutSeconds: Int(SessionDeadlines.clientWait.components.seconds))
        } catch .untrusted(let reason) {
            throw WireFailure(.permissionDenied, SocketTrust.refusal(path: path, reason: reason))
        } catch {
            return nil
        }
    }
}
