
#if canImport(Glibc)
import Glibc
#endif

/// One blocking varlink connection over a Unix socket: `socket`, `connect`, `send`, `recv` with a
/// timeout, no threads, no event loop. Frames are JSON ended by a NUL byte (the varlink wire). The
/// lean CLI makes one call on it and exits; `VaultClient` keeps one open and runs its calls on a
/// thread of its own.
///
/// ```swift
/// let connection = try WireConnection(path: socket)
/// try connection.send(VarlinkWire.encodeCall(VaultInterface.Retrieve.self, .init(service: "github", account: "ada")))
/// let reply = try WireReply.decode(VaultInterface.Retrieve.self, connection.receiveFrame(), errors: WireFailure.vault)
/// ```
///
/// The descriptor is close-on-exec, so a process that hands over to another executable after a
/// failed call leaks nothing into it. One call at a time: a caller that shares a connection between
/// threads holds it under a lock (`VaultClient` does), hence `@unchecked Sendable`.
public final class WireConnection: @unchecked Sendable {
    public let path: String
    private var descriptor: Int32
    /// What came after the last frame's NUL: the start of the next reply of a streaming call.
    private var leftover = WipedBuffer(capacity: 16)

    /// The largest reply accepted, as the NIO client's default.
    public static let maximumReplyBytes = 16 << 20

    /// Connects, with `timeoutSeconds` bounding every later send and receive, and checks that the
    /// socket is this user's (``SocketTrust``) before anything is sent. Throws the `errno` of a failed
    /// connect (a path too long for `sockaddr_un` is `ENAMETOOLONG`), or why the socket is not trusted.
    public init(path: String, timeoutSeconds: Int = 30) throws(ConnectFailure) {
        // The socket is this connection's only once every check passed: a throw after `descriptor`
        // is set would run `deinit`, and close the number again, by then perhaps another thread's.
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
            throw .untrusted(reason: reason)
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.path = path
        self.descriptor = descriptor
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Hands the connected, checked socket to a caller that reads it elsewhere (an event loop, for
    /// a stream that may last for hours without a thread waiting on it); this connection then owns
    /// it no more and must not be used again. Call it before receiving anything: bytes this
    /// connection already read past a frame would be lost.
    public func detachDescriptor() -> Int32 {
        precondition(descriptor >= 0 && leftover.count == 0, "a WireConnection's socket is detached once, before any receive")
        defer { descriptor = -1 }
        return descriptor
    }

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
        if leftover.count > 0 {
            let carried = leftover
            leftover = WipedBuffer(capacity: 16)
            if carried.withUnsafeBytes({ keep($0, in: frame) }) { return frame }
        }
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
                let received = UnsafeRawBufferPointer(rebasing: out[0..<n])
                if let end = received.firstIndex(of: 0) {
                    ended = true
                    leftover.append(UnsafeRawBufferPointer(rebasing: received[(end + 1)...]))
                    return end
                }
                return n
            }
            if ended { return frame }
            if let failure { throw failure }
            if frame.count > Self.maximumReplyBytes { throw .protocolViolation("a reply over \(Self.maximumReplyBytes) bytes") }
        }
    }
}

extension WireConnection {
    /// Appends `bytes` to `frame` up to the first NUL, keeping what follows it for the next frame;
    /// true when the frame is whole.
    private func keep(_ bytes: UnsafeRawBufferPointer, in frame: WipedBuffer) -> Bool {
        guard let end = bytes.firstIndex(of: 0) else {
            frame.append(bytes)
            return false
        }
        frame.append(UnsafeRawBufferPointer(rebasing: bytes[..<end]))
        leftover.append(UnsafeRawBufferPointer(rebasing: bytes[(end + 1)...]))
        return true
    }
}

/// Why no connection was made.
public enum ConnectFailure: Error {
    /// `connect` failed with this `errno`: no daemon answers there.
    case unreachable(code: Int32)
    /// Something answers, but not this user's daemon (``SocketTrust``): why not, in words.
    case untrusted(reason: String)
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
