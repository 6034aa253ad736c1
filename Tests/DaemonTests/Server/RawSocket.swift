import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A bare Unix-socket client for sending malformed bytes the real client never would.
final class RawSocket {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            // Fully initialised: the throw runs `deinit`, which closes `fd` (once).
            throw HarnessError("connect failed: \(String(cString: strerror(errno)))")
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Writes all of `bytes`, or as much as the peer takes before it closes or stops reading.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Int {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            offset += n
        }
        return offset
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads one NUL-terminated reply, or nil when the peer closed (or said nothing in 10 s).
    func readReply() -> [String: Any]? {
        var frame: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            if n <= 0 { return nil }
            if byte == 0 { break }
            frame.append(byte)
        }
        return (try? JSONSerialization.jsonObject(with: Data(frame))) as? [String: Any]
    }

    /// Whether the peer closed the connection (EOF or reset) within 10 s.
    func peerClosed() -> Bool {
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }
}

func frame(_ json: String) -> [UInt8] { Array(json.utf8) + [0] }
