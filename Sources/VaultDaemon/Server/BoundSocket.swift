import VaultCrypto
import Synchronization

/// The socket file the daemon's server bound, once it has: the socket watch compares the path with
/// it, and shutdown removes the path only while it still is this socket. Stays nil for a socket
/// systemd passed (systemd's to manage) and when the server never bound.
final class BoundSocket: Sendable {
    private let identity = Locked<SocketIdentity?>(nil)
    /// Yields once the server has bound (or given up): the socket watch waits for it.
    let settled: AsyncStream<Void>
    private let settledContinuation: AsyncStream<Void>.Continuation

    init() {
        (settled, settledContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The server has bound, or given up.
    func settle() {
        settledContinuation.yield()
    }

    var current: SocketIdentity? { identity.withLock { $0 } }

    func set(_ bound: SocketIdentity?) {
        identity.withLock { $0 = bound }
        settle()
    }
}
