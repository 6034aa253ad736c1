import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Plain HTTP to a loopback listener (a sign-in's receiver, a metrics endpoint), over a raw socket: IPv4 or IPv6, one
/// request, the whole answer. It blocks its thread.
public enum LoopbackHTTP {
    /// One GET to 127.0.0.1:`port` (`ipv6`: [::1]:`port`) with `target`; the response's status line and whole text.
    public static func get(port: Int, _ target: String, ipv6: Bool = false) throws -> (status: String, response: String) {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        guard withAddress(ipv6: ipv6, port: port, { connect(fd, $0, $1) }) == 0 else {
            throw HarnessError("cannot connect to \(ipv6 ? "[::1]" : "127.0.0.1"):\(port): \(String(cString: strerror(errno)))")
        }
        return exchange(fd, "GET \(target) HTTP/1.1\r\nHost: localhost:\(port)\r\nUser-Agent: test\r\nConnection: close\r\n\r\n")
    }

    /// One GET with `target` over the Unix socket at `path` (a metrics endpoint's); the response's status line and whole text.
    public static func get(unixSocket path: String, _ target: String) throws -> (status: String, response: String) {
        try send(unixSocket: path, "GET \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    }

    /// Sends `request` as it is over the Unix socket at `path`; the response's status line and whole
    /// text, read until the server closes.
    public static func send(unixSocket path: String, _ request: String) throws -> (status: String, response: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw HarnessError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw HarnessError("cannot connect to \(path): \(String(cString: strerror(errno)))") }
        return exchange(fd, request)
    }

    /// Sends `request` on the connected `fd` and reads until the peer closes (or ten minutes pass without a byte: a hang guard, as a
    /// busy machine has kept a loopback answer from coming for over a minute).
    private static func exchange(_ fd: Int32, _ request: String) -> (status: String, response: String) {
        var timeout = timeval(tv_sec: 600, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array(request.utf8)
        _ = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        let text = String(decoding: response, as: UTF8.self)
        return (text.components(separatedBy: "\r\n").first ?? "", text)
    }

    /// Calls `body` with the address of 127.0.0.1 (`ipv6`: ::1) and `port`.
    public static func withAddress(ipv6: Bool, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            address.sin6_addr = in6addr_loopback
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }

    /// A port free on 127.0.0.1 just now (the kernel's choice).
    public static func portFreeOnIPv4Loopback() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        guard withAddress(ipv6: false, port: 0, { bind(fd, $0, $1) }) == 0 else { throw HarnessError("no free port on 127.0.0.1") }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether this host has an IPv6 loopback (::1) to listen on.
    public static let hasIPv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return fd >= 0 && withAddress(ipv6: true, port: 0, { bind(fd, $0, $1) }) == 0
    }()

    /// What the IPv6 loopback tests need: the text of a skip, or of a failure under CI.
    public static let ipv6Missing = "an IPv6 loopback (::1) to listen on: enable IPv6 on lo "
        + "(sysctl -w net.ipv6.conf.lo.disable_ipv6=0)"

    /// A port free on both 127.0.0.1 and ::1 just now, or nil when this host has no IPv6 loopback.
    /// Tries the kernel's choice of IPv4 port many times: on a busy machine one may be taken on ::1.
    public static func portFreeOnBothLoopbacks() -> Int? {
        for _ in 0..<1000 {
            let v4 = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0), v6 = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(v4); close(v6) }
            guard withAddress(ipv6: false, port: 0, { bind(v4, $0, $1) }) == 0 else { return nil }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(v4, $0, &length) } }
            let port = Int(UInt16(bigEndian: address.sin_port))
            var one: Int32 = 1
            setsockopt(v6, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            if withAddress(ipv6: true, port: port, { bind(v6, $0, $1) }) == 0 { return port }
            if errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT { return nil }
        }
        return nil
    }
}
