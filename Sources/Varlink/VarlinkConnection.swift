import NIOConcurrencyHelpers
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A small blocking varlink client over a Unix socket, cheap enough to open per CLI command.
///
/// ```swift
/// let connection = try VarlinkConnection(unixSocketPath: path)
/// defer { connection.close() }
/// let reply = try connection.call("org.sortedvault.vault.Retrieve", ["service": "github"])
/// ```
///
/// It makes one call at a time (calls from several threads are serialized). Any transport
/// failure (timeout, bad reply) closes the connection, since its position in the stream is then
/// unknown; later calls throw ``VarlinkClientError/connectionClosed``. Do not call from inside
/// an `onReply` closure of ``callMore(_:_:onReply:)``: that deadlocks.
public final class VarlinkConnection: @unchecked Sendable {
    private struct State {
        var descriptor: CInt
        var received: [UInt8] = []
    }

    /// The largest reply accepted.
    public let maxReplyBytes: Int
    private let path: String
    private let state: NIOLockedValueBox<State>

    /// Connects to the service at `unixSocketPath`; `timeout` bounds every later send and receive.
    ///
    /// Throws ``VarlinkClientError/unreachable(path:reason:)`` when no daemon listens there, and
    /// ``VarlinkClientError/permissionDenied(path:)`` when the socket is not ours.
    ///
    /// `verifyPeer` sees the connected descriptor before anything is sent, and returns why the peer
    /// is not to be trusted (thrown as ``VarlinkClientError/untrustedPeer(path:reason:)``), or nil.
    public init(unixSocketPath path: String, timeout: Duration = .seconds(30), maxReplyBytes: Int = 16 << 20,
                verifyPeer: ((CInt) -> String?)? = nil) throws {
        self.path = path
        self.maxReplyBytes = maxReplyBytes
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw VarlinkClientError.unreachable(path: path, reason: Self.errorText(errno))
        }
        do {
            try Self.connect(descriptor, to: path)
            if let reason = verifyPeer?(descriptor) { throw VarlinkClientError.untrustedPeer(path: path, reason: reason) }
            try Self.setTimeout(descriptor, timeout)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        self.state = NIOLockedValueBox(State(descriptor: descriptor))
    }

    deinit {
        close()
    }

    /// Calls `method` and returns the reply's parameters; an error reply throws ``VarlinkError``.
    public func call(_ method: String, _ parameters: [String: JSONValue] = [:]) throws -> [String: JSONValue] {
        try state.withLockedValue { state in
            try send(VarlinkMessage.encodeCall(method, parameters), &state)
            let (reply, continues) = try receiveReply(&state)
            if continues {
                disconnect(&state)
                throw VarlinkClientError.protocolViolation("a continuing reply to a call without more")
            }
            return reply
        }
    }

    /// Calls `method` with `more: true` and passes each reply to `onReply` until the last one,
    /// or until `onReply` returns false (the connection is then closed, since the rest of the
    /// stream would otherwise have to be read).
    public func callMore(_ method: String, _ parameters: [String: JSONValue], onReply: ([String: JSONValue]) throws -> Bool) throws {
        try state.withLockedValue { state in
            try send(VarlinkMessage.encodeCall(method, parameters, more: true), &state)
            while true {
                let (reply, continues) = try receiveReply(&state)
                let keepGoing: Bool
                do {
                    keepGoing = try onReply(reply)
                } catch {
                    if continues { disconnect(&state) }
                    throw error
                }
                if !continues { return }
                if !keepGoing {
                    disconnect(&state)
                    return
                }
            }
        }
    }

    /// Sends a call frame encoded by the caller (NUL included) and hands each reply frame (without
    /// its NUL) to `onReply`, which decodes it and returns whether more replies follow
    /// (`continues: true`). Both frames are the caller's and this connection's to wipe: the reply
    /// is zeroed after `onReply` returns. For typed messages whose secrets never become a `String`.
    ///
    /// A reply `onReply` cannot decode (it throws) closes the connection, since its stream
    /// position is then unknown; the error is rethrown.
    public func exchange(_ frame: UnsafeRawBufferPointer, onReply: (UnsafeRawBufferPointer) throws -> Bool) throws {
        try state.withLockedValue { state in
            try send(frame, &state)
            while true {
                var reply = try receiveFrame(&state)
                defer { wipe(&reply) }
                let continues: Bool
                do {
                    continues = try reply.withUnsafeBytes { try onReply($0) }
                } catch {
                    disconnect(&state)
                    throw error
                }
                if !continues { return }
            }
        }
    }

    /// Sends a call with `oneway: true`; the service sends no reply.
    public func callOneway(_ method: String, _ parameters: [String: JSONValue] = [:]) throws {
        try state.withLockedValue { state in
            try send(VarlinkMessage.encodeCall(method, parameters, oneway: true), &state)
        }
    }

    /// Closes the connection. Safe to call more than once.
    public func close() {
        state.withLockedValue { disconnect(&$0) }
    }

    // MARK: - Socket plumbing

    private func disconnect(_ state: inout State) {
        if state.descriptor >= 0 {
            Glibc.close(state.descriptor)
            state.descriptor = -1
        }
        wipe(&state.received)
    }

    private func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { memset(base, 0, raw.count) }
        }
        bytes.removeAll()
    }

    private func send(_ message: [UInt8], _ state: inout State) throws {
        var message = message
        defer { wipe(&message) }
        try message.withUnsafeBytes { try send($0, &state) }
    }

    private func send(_ message: UnsafeRawBufferPointer, _ state: inout State) throws {
        guard state.descriptor >= 0 else { throw VarlinkClientError.connectionClosed }
        var offset = 0
        while offset < message.count {
            let sent = Glibc.send(state.descriptor, message.baseAddress! + offset, message.count - offset, Int32(MSG_NOSIGNAL))
            if sent > 0 {
                offset += sent
                continue
            }
            let error = errno
            if error == EINTR { continue }
            disconnect(&state)
            throw (error == EAGAIN || error == EWOULDBLOCK) ? VarlinkClientError.timedOut : VarlinkClientError.connectionClosed
        }
    }

    /// Reads one reply frame and decodes it.
    private func receiveReply(_ state: inout State) throws -> ([String: JSONValue], continues: Bool) {
        var frame = try receiveFrame(&state)
        defer { wipe(&frame) }
        guard case .object(let message)? = try? JSONValue.parse(frame, maxDepth: 256) else {
            disconnect(&state)
            throw VarlinkClientError.protocolViolation("a reply that is not a JSON object")
        }
        var parameters: [String: JSONValue] = [:]
        switch message["parameters"] {
        case nil, .null?: break
        case .object(let object)?: parameters = object
        default:
            disconnect(&state)
            throw VarlinkClientError.protocolViolation("reply parameters that are not an object")
        }
        if case .string(let name)? = message["error"] {
            throw VarlinkError(name: name, parameters: parameters)
        }
        return (parameters, message["continues"]?.boolValue ?? false)
    }

    private func receiveFrame(_ state: inout State) throws -> [UInt8] {
        var scanned = 0
        while true {
            if let nul = state.received[scanned...].firstIndex(of: 0) {
                let frame = Array(state.received[..<nul])
                let rest = Array(state.received[(nul + 1)...])
                wipe(&state.received)
                state.received = rest
                return frame
            }
            scanned = state.received.count
            guard state.received.count <= maxReplyBytes else {
                disconnect(&state)
                throw VarlinkClientError.protocolViolation("a reply longer than \(maxReplyBytes) bytes")
            }
            guard state.descriptor >= 0 else { throw VarlinkClientError.connectionClosed }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { raw in
                recv(state.descriptor, raw.baseAddress!, raw.count, 0)
            }
            if count > 0 {
                state.received.append(contentsOf: chunk[..<count])
                wipe(&chunk)
                continue
            }
            let error = errno
            if count < 0 && error == EINTR { continue }
            disconnect(&state)
            if count < 0 && (error == EAGAIN || error == EWOULDBLOCK) { throw VarlinkClientError.timedOut }
            throw VarlinkClientError.connectionClosed
        }
    }

    private static func connect(_ descriptor: CInt, to path: String) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathBytes = Array(path.utf8)
        guard !pathBytes.isEmpty, pathBytes.count < capacity else {
            throw VarlinkClientError.unreachable(path: path, reason: "the path is empty or longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result != 0 else { return }
        let error = errno
        if error == EACCES || error == EPERM { throw VarlinkClientError.permissionDenied(path: path) }
        throw VarlinkClientError.unreachable(path: path, reason: errorText(error))
    }

    private static func setTimeout(_ descriptor: CInt, _ timeout: Duration) throws {
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(max(0, seconds)), tv_usec: Int(max(0, attoseconds) / 1_000_000_000_000))
        if value.tv_sec == 0 && value.tv_usec == 0 { value.tv_usec = 1 }
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
