import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A client that holds a connection to a loopback listener by sending a request one byte at a
/// time, a byte every `interval`, and never finishing it: what a local process does to keep a
/// one-connection-at-a-time server busy. It trickles on a thread of its own until ``stop()``, and
/// tells whether the server has closed the connection.
public final class SlowLorisClient: Sendable {
    private let fd: Int32
    private let state = Mutex<(stopped: Bool, sent: Int, closedByServer: Bool)>((false, 0, false))

    /// Connects to 127.0.0.1:`port` and sends `start` at once (e.g. `GET /path?code=`), then one
    /// more byte every `interval`.
    public init(port: Int, start: String, interval: Duration = .seconds(1)) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard LoopbackHTTP.withAddress(ipv6: false, port: port, { connect(fd, $0, $1) }) == 0 else {
            close(fd)
            throw HarnessError("the slow client cannot connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        _ = Array(start.utf8).withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        Thread { [self] in
            while !state.withLock({ $0.stopped }) {
                Thread.sleep(forTimeInterval: Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18)
                if state.withLock({ $0.stopped }) { break }
                var byte = UInt8(ascii: "a")
                let sent = send(fd, &byte, 1, Int32(MSG_NOSIGNAL))
                let closed = sent <= 0 || !isOpen
                state.withLock {
                    if sent == 1 { $0.sent += 1 }
                    if closed { $0.closedByServer = true }
                }
                if closed { break }
            }
        }.start()
    }

    /// Bytes trickled after the first ones.
    public var trickled: Int { state.withLock { $0.sent } }

    /// Whether the server has not closed the connection (nothing to read, no end of stream, no error).
    public var isOpen: Bool {
        if state.withLock({ $0.closedByServer || $0.stopped }) { return false }
        var byte: UInt8 = 0
        let got = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Stops trickling and closes the connection.
    public func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    deinit {
        stop()
        close(fd)
    }
}
