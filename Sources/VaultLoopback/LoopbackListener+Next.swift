import FoundationEssentials
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The receiver's connections, served together: each one non-blocking, read as it becomes
/// readable, and closed when its whole request has not come within ``LoopbackListener/requestDeadline``.
///
/// Why not one at a time: a local process that opened a connection and sent a byte now and then
/// held the receiver, so the browser's real callback waited behind it and the CLI's `--timeout`
/// did not hold. Now a slow or idle connection costs one slot of ``LoopbackListener/maximumConnections``
/// for at most the request deadline; when every slot is taken, the oldest connection is dropped
/// for the new one (a browser sends its request as soon as it connects, so it is never the oldest
/// for long), and the wait ends at its own deadline whatever the connections do.
extension LoopbackListener {
    /// A connection whose request head is being read.
    struct OpenConnection {
        let fd: Int32
        var head: [UInt8]
        var count = 0
        let deadline: ContinuousClock.Instant
    }

    /// Waits for the next request at the sign-in's path, answering every other request itself;
    /// `wake` (readable) ends the wait early with `.interrupted`; nil `deadline`: only `wake` ends
    /// it. It blocks its thread.
    public func next(until deadline: ContinuousClock.Instant?, wake: Int32) -> Result<Callback, ReadableWait.Result> {
        while true {
            let now = ContinuousClock.now
            dropExpired(now)
            if let deadline, deadline <= now { return .failure(.timedOut) }
            var polled = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
                + sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                + connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let until = ([deadline].compactMap { $0 } + connections.map(\.deadline)).min()
            let ready = poll(&polled, nfds_t(polled.count), Self.milliseconds(until.map { now.duration(to: $0) } ?? .seconds(60)))
            if ready < 0 && errno != EINTR { return .failure(.timedOut) }
            if ready <= 0 { continue }
            if polled[0].revents != 0 { return .failure(.interrupted) }
            // Connections first (their fds as polled: accepting changes the list).
            for entry in polled.dropFirst(1 + sockets.count) where entry.revents != 0 {
                if let callback = readMore(entry.fd) { return .success(callback) }
            }
            for entry in polled.dropFirst().prefix(sockets.count) where entry.revents != 0 { accept(from: entry.fd) }
        }
    }

    /// A connection's deadline counts from its accept, not from before the poll: the poll may have
    /// waited far longer than a request deadline for it (a user signing in).
    private func accept(from socket: Int32) {
        let fd = Glibc.accept(socket, nil, nil)
        guard fd >= 0 else { return }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        if connections.count >= Self.maximumConnections, let oldest = connections.indices.min(by: { connections[$0].deadline < connections[$1].deadline }) {
            Glibc.close(connections.remove(at: oldest).fd)
        }
        connections.append(OpenConnection(fd: fd, head: [UInt8](repeating: 0, count: Self.maximumHeadBytes),
                                          deadline: ContinuousClock.now + requestDeadline))
    }

    /// Reads what `fd` has; the callback once its head is a `GET` of the path. A finished request
    /// that is not one is answered and closed; a connection that ended or failed is closed.
    private func readMore(_ fd: Int32) -> Callback? {
        guard let index = connections.firstIndex(where: { $0.fd == fd }) else { return nil }
        var connection = connections[index]
        let got = connection.head.withUnsafeMutableBytes { read(fd, $0.baseAddress! + connection.count, $0.count - connection.count) }
        if got < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        guard got > 0 else {
            finish(at: index)
            Glibc.close(fd)
            return nil
        }
        connection.count += got
        connections[index] = connection
        // The whole head is read before answering: closing a socket with unread bytes resets the
        // connection, and the browser would show an error instead of the page.
        if Self.endOfHead(connection.head, connection.count), let end = connection.head[0..<connection.count].firstIndex(of: 0x0A) {
            let query = route(Array(connection.head[0..<end]), fd)
            finish(at: index)
            return query.map { Callback(connection: fd, query: $0) }
        }
        if connection.count == connection.head.count {
            finish(at: index)
            Self.reply(fd, status: "431 Request Header Fields Too Large", page: "Request too large.")
        }
        return nil
    }

    /// Takes the connection out of the list, wiping what was read of it (it may hold a code).
    private func finish(at index: Int) {
        var connection = connections.remove(at: index)
        connection.head.withUnsafeMutableBytes { explicit_bzero($0.baseAddress!, $0.count) }
    }

    /// Closes the connections whose request did not come in time.
    private func dropExpired(_ now: ContinuousClock.Instant) {
        while let index = connections.firstIndex(where: { $0.deadline <= now }) {
            let fd = connections[index].fd
            finish(at: index)
            Self.reply(fd, status: "408 Request Timeout", page: "The request took too long.")
        }
    }

    /// Closes every connection still being read (the listener is closing).
    func closeConnections() {
        while !connections.isEmpty {
            let fd = connections[0].fd
            finish(at: 0)
            Glibc.close(fd)
        }
    }

    private static func milliseconds(_ left: Duration) -> Int32 {
        guard left > .zero else { return 0 }
        return Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
    }
}
