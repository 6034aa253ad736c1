import Foundation  // the benchmark client, never installed: String(format:) for its tables needs full Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one client both the vault and ssh-agent are measured with: a blocking Unix socket that sends a
/// request and reads one reply, framed either by a NUL (varlink) or by a 4-byte length (ssh-agent).
final class BenchSocket {
    enum Framing { case nulTerminated, lengthPrefixed }

    private let fd: Int32
    private let framing: Framing
    private var buffer = [UInt8](repeating: 0, count: 64 << 10)

    init(path: String, framing: Framing) throws {
        self.framing = framing
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            // Fully initialised: the throw runs `deinit`, which closes `fd` (once).
            throw BenchError("cannot connect to \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    /// Sends `request` and returns the reply as text (NUL framing only).
    func roundTripReply(_ request: [UInt8]) throws -> String {
        let count = try roundTrip(request)
        return String(decoding: buffer[0..<max(count - 1, 0)], as: UTF8.self)
    }

    /// Sends `request` and returns the size of the reply.
    func roundTrip(_ request: [UInt8]) throws -> Int {
        var offset = 0
        while offset < request.count {
            let n = request.withUnsafeBytes { write(fd, $0.baseAddress! + offset, request.count - offset) }
            guard n > 0 else { throw BenchError("write failed") }
            offset += n
        }
        var received = 0
        while true {
            if received == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + received, $0.count - received) }
            guard n > 0 else { throw BenchError("the server closed the connection") }
            received += n
            switch framing {
            case .nulTerminated:
                if buffer[received - 1] == 0 { return received }
            case .lengthPrefixed:
                if received >= 4 {
                    let length = Int(buffer[0]) << 24 | Int(buffer[1]) << 16 | Int(buffer[2]) << 8 | Int(buffer[3])
                    if received >= 4 + length { return received }
                }
            }
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
