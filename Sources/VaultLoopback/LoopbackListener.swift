import FoundationEssentials
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The browser sign-in's receiver: an HTTP/1.1 listener on 127.0.0.1 only (and ::1 for a
/// `localhost` redirect; never every interface), on an ephemeral port unless told, answering only
/// at one random path (RFC 8252 §7.3).
///
/// ```swift
/// let listener = try LoopbackListener(port: 0, path: nil)
/// defer { listener.close() }
/// // BeginLogin with listener.redirectURI, then:
/// let request = listener.next(until: deadline, wake: interruptPipe)   // one request; answer it with reply
/// ```
///
/// Parsing is bounded and simple on purpose: one request per connection (`Connection: close`),
/// up to ``maximumConnections`` read at once, each head read up to ``maximumHeadBytes`` within
/// ``requestDeadline``, only `GET` of the exact path; anything else is answered 404/405 and dropped. Replies echo nothing from the request and
/// tell the browser not to keep them (`Cache-Control: no-store`) or send them on (`Referrer-Policy:
/// no-referrer`): the address bar held the code.
public final class LoopbackListener: @unchecked Sendable {
    public static let maximumHeadBytes = 8 * 1024
    /// How long one connection may take to send its whole request head, unless told (the browser's
    /// takes milliseconds); a slower one is answered 408 and closed.
    public static let defaultRequestDeadline = Duration.seconds(10)
    /// Connections read at once; one more drops the oldest (see `LoopbackListener+Next.swift`).
    public static let maximumConnections = 16

    public let port: UInt16
    public let path: String
    /// How long one connection may take to send its request head (``defaultRequestDeadline`` unless told).
    public let requestDeadline: Duration
    /// The host of ``redirectURI``: `127.0.0.1`, or `localhost` (listening on ::1 too).
    public let host: String
    var sockets: [Int32]
    /// The connections whose request is being read; used only by the thread in ``next(until:wake:)``
    /// and by ``close()`` once no one waits.
    var connections: [OpenConnection] = []

    public var redirectURI: String { "http://\(host):\(port)\(path)" }

    /// - Parameters:
    ///   - port: 0 for an ephemeral port.
    ///   - path: nil for a random one (`/` and 32 hex digits).
    ///   - localhost: listen on ::1 as well, on the same port, for a redirect URI naming `localhost`
    ///     (a browser may resolve it to ::1 first and never try 127.0.0.1). A host with no IPv6
    ///     loopback gets 127.0.0.1 alone, which is where the name then leads.
    ///   - requestDeadline: how long one connection may take to send its request head.
    public init(port: UInt16, path: String?, localhost: Bool = false, requestDeadline: Duration = defaultRequestDeadline) throws {
        self.requestDeadline = requestDeadline
        self.path = path ?? "/" + Hex.text(SecureRandom.bytes(count: 16))
        host = localhost ? "localhost" : "127.0.0.1"
        // An ephemeral port of 127.0.0.1 may be taken on ::1: then another one is tried.
        var attempt = 0
        while true {
            attempt += 1
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // 127.0.0.1, never INADDR_ANY
            let ipv4 = try Self.listening(on: &address).mapError { Self.cannotListen("127.0.0.1", port, $0) }.get()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(ipv4, $0, &length) }
            }
            let bound = UInt16(bigEndian: address.sin_port)
            guard localhost else {
                (self.port, sockets) = (bound, [ipv4])
                return
            }
            var address6 = sockaddr_in6()
            address6.sin6_family = sa_family_t(AF_INET6)
            address6.sin6_port = bound.bigEndian
            address6.sin6_addr = in6addr_loopback  // ::1, never in6addr_any
            switch Self.listening(on: &address6) {
            case .success(let ipv6):
                (self.port, sockets) = (bound, [ipv4, ipv6])
                return
            case .failure(let error) where error.code == EADDRNOTAVAIL || error.code == EAFNOSUPPORT:
                (self.port, sockets) = (bound, [ipv4])  // no IPv6 loopback on this host: localhost can only be 127.0.0.1
                return
            case .failure(let error) where error.code == EADDRINUSE && port == 0 && attempt < 8:
                Glibc.close(ipv4)
            case .failure(let error):
                Glibc.close(ipv4)
                throw Self.cannotListen("[::1]", bound, error)
            }
        }
    }

    /// Why a socket could not listen: the `errno` of the call that failed.
    struct SocketError: Error { let code: Int32 }

    /// A stream socket bound to `address` (IPv6: that address only, not its IPv4 twin) and listening.
    private static func listening<Address>(on address: inout Address) -> Result<Int32, SocketError> {
        let family = Int32(withUnsafeBytes(of: address) { $0.load(as: sa_family_t.self) })
        let fd = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(SocketError(code: errno)) }
        var one: Int32 = 1
        if family == AF_INET6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = errno
            Glibc.close(fd)
            return .failure(SocketError(code: code))
        }
        return .success(fd)
    }

    private static func cannotListen(_ host: String, _ port: UInt16, _ error: SocketError) -> VaultError {
        VaultError(.unavailable, "cannot listen on \(host):\(port) for the sign-in (\(String(cString: strerror(error.code)))): choose another --port, or omit it")
    }

    deinit { close() }

    public func close() {
        closeConnections()
        for socket in sockets { Glibc.close(socket) }
        sockets = []
    }

    /// A request at the sign-in's path: its connection (to answer) and its query, in secure memory.
    public struct Callback: Sendable {
        public let connection: Int32
        public let query: SecureBytes
    }

    static func endOfHead(_ head: [UInt8], _ count: Int) -> Bool {
        count >= 4 && head[count - 4] == 0x0D && head[count - 3] == 0x0A && head[count - 2] == 0x0D && head[count - 1] == 0x0A
            || count >= 2 && head[count - 2] == 0x0A && head[count - 1] == 0x0A
    }

    func route(_ line: [UInt8], _ connection: Int32) -> SecureBytes? {
        var line = line
        defer { line.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
        if line.last == 0x0D { line.removeLast() }
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].starts(with: Array("HTTP/1.".utf8)) else {
            Self.reply(connection, status: "400 Bad Request", page: "Bad request.")
            return nil
        }
        let target = parts[1]
        let question = target.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        guard Array(target[target.startIndex..<question]) == Array(path.utf8) else {
            Self.reply(connection, status: "404 Not Found", page: "Not found.")
            return nil
        }
        guard Array(parts[0]) == Array("GET".utf8) else {
            Self.reply(connection, status: "405 Method Not Allowed", page: "Only GET is answered here.")
            return nil
        }
        let queryStart = question == target.endIndex ? question : target.index(after: question)
        let fragment = target[queryStart...].firstIndex(of: UInt8(ascii: "#")) ?? target.endIndex
        return SecureBytes(copying: target[queryStart..<fragment])
    }

    /// Answers and closes: a fixed page, nothing from the request in it.
    public static func reply(_ connection: Int32, status: String, page: String) {
        let body = "<!doctype html><meta charset=\"utf-8\"><title>sortedvault</title><p>\(page)</p>\n"
        let head = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
        let bytes = Array((head + body).utf8)
        var sent = 0
        while sent < bytes.count {
            let wrote = bytes.withUnsafeBytes { send(connection, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if wrote <= 0 { break }
            sent += wrote
        }
        shutdown(connection, Int32(SHUT_WR))
        Glibc.close(connection)
    }
}
