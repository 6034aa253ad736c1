import VaultAPI

#if canImport(Glibc)
import Glibc
#endif

/// One blocking varlink connection over a Unix socket, for a process that makes one call and exits:
/// `socket`, `connect`, `send`, `recv` with a timeout, no threads, no event loop. Frames are JSON
/// ended by a NUL byte (the varlink wire).
///
/// ```swift
/// let connection = try WireConnection(path: socket)
/// try connection.send(VarlinkWire.encodeCall(VaultInterface.Retrieve.self, .init(service: "github", account: "ada")))
/// let reply = try WireReply.decode(VaultInterface.Retrieve.self, connection.receiveFrame(), errors: WireFailure.vault)
/// ```
///
/// The descriptor is close-on-exec, so a process that hands over to another executable after a
/// failed call leaks nothing into it.
public final class WireConnection {
    public let path: String
    private let descriptor: Int32

    /// The largest reply accepted, as the NIO client's default.
    public static let maximumReplyBytes = 16 << 20

    /// Connects, with `timeoutSeconds` bounding every later send and receive, and checks that the
    /// socket is this user's (``SocketTrust``) before anything is sent. Throws the `errno` of a failed
    /// connect (a path too long for `sockaddr_un` is `ENAMETOOLONG`), or why the socket is not trusted.
    public init(path: String, timeoutSeconds: Int = 30) throws(ConnectFailure) {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .unreachable(code: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            close(descriptor)
            throw .unreachable(code: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let status = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            close(descriptor)
            throw .unreachable(code: code)
        }
        if let reason = SocketTrust.distrust(descriptor: descriptor, path: path) {
            close(descriptor)
            throw .untrusted(SocketTrust.refusal(path: path, reason: reason))
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The connection to the daemon at `path`, or nil when none answers there; throws (exit 3) when
    /// something answers that is not this user's daemon.
    public static func toDaemon(at path: String) throws(WireFailure) -> WireConnection? {
        do {
            return try WireConnection(path: path)
        } catch .untrusted(let message) {
            throw WireFailure(.permissionDenied, message)
        } catch {
            return nil
        }
    }

    deinit { close(descriptor) }

    /// Sends a whole frame (its terminating NUL included by the writer).
    public func send(_ frame: WireBytes) throws(TransportFailure) {
        let failure: TransportFailure? = frame.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    return (errno == EAGAIN || errno == EWOULDBLOCK) ? .timedOut : .closed
                }
                offset += n
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Reads one reply frame, without its NUL, into a buffer that is wiped when released.
    public func receiveFrame() throws(TransportFailure) -> WipedBuffer {
        let frame = WipedBuffer(capacity: 8192)
        while true {
            var failure: TransportFailure?
            var ended = false
            _ = frame.appendInPlace(upTo: 8192) { out in
                let n = recv(descriptor, out.baseAddress!, out.count, 0)
                if n < 0 {
                    if errno == EINTR { return 0 }
                    failure = (errno == EAGAIN || errno == EWOULDBLOCK) ? .timedOut : .closed
                    return 0
                }
                if n == 0 {
                    failure = .closed
                    return 0
                }
                if let end = UnsafeRawBufferPointer(rebasing: out[0..<n]).firstIndex(of: 0) {
                    ended = true
                    return end  // bytes after the NUL would belong to a reply nobody asked for
                }
                return n
            }
            if ended { return frame }
            if let failure { throw failure }
            if frame.count > Self.maximumReplyBytes { throw .protocolViolation("a reply over \(Self.maximumReplyBytes) bytes") }
        }
    }
}

/// Why no connection was made.
public enum ConnectFailure: Error {
    /// `connect` failed with this `errno`: no daemon answers there.
    case unreachable(code: Int32)
    /// Something answers, but not this user's daemon (``SocketTrust``): the whole message.
    case untrusted(String)
}

/// Why a call got no reply.
public enum TransportFailure: Error, Equatable {
    /// The daemon did not answer within the timeout.
    case timedOut
    /// The daemon closed the connection (or it broke) before a whole reply arrived.
    case closed
    /// The reply was not a varlink reply.
    case protocolViolation(String)
}
