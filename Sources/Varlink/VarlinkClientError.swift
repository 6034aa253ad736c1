/// Why a ``VarlinkConnection`` call could not get an answer. (An answer that is an error reply
/// is thrown as ``VarlinkError`` instead.)
public enum VarlinkClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing listens at the path (no such file, or connection refused): the daemon is not running.
    case unreachable(path: String, reason: String)
    /// The socket exists but this user may not connect to it.
    case permissionDenied(path: String)
    /// Something answers at the path, but the caller's check of the peer refused it (nothing was sent).
    case untrustedPeer(path: String, reason: String)
    /// The service did not answer within the timeout; the connection is closed.
    case timedOut
    /// The service closed the connection, or it was closed locally.
    case connectionClosed
    /// The service sent something that is not a varlink reply; the connection is closed.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .unreachable(let path, let reason):
            return "No service at \(path) (\(reason)). Start the daemon, or check the socket path."
        case .permissionDenied(let path):
            return "Permission denied connecting to \(path). The socket belongs to another user; run as its owner."
        case .untrustedPeer(let path, let reason):
            return "Refusing the service at \(path): \(reason). Nothing was sent."
        case .timedOut:
            return "The service did not answer in time. It may be overloaded or hung; try again or restart it."
        case .connectionClosed:
            return "The service closed the connection. It may have restarted or refused the request; try again."
        case .protocolViolation(let what):
            return "The service sent an invalid varlink reply (\(what)). Check that the socket belongs to a varlink service."
        }
    }
}
