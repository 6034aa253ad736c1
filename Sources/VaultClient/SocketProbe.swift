import Varlink

/// Whether something accepts connections on a Unix socket path: how the CLI decides to start a
/// daemon, and how a starting daemon makes sure it never takes over a live socket.
public enum SocketProbe {
    public static func answers(at path: String) -> Bool {
        guard let connection = try? VarlinkConnection(unixSocketPath: path, timeout: .seconds(1)) else { return false }
        connection.close()
        return true
    }
}
