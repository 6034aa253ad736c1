import Foundation
import TestSupport

/// A listener on 127.0.0.1 that plays a PostgreSQL server just far enough to ask for the password:
/// it refuses TLS (`N` to an SSLRequest), and answers a start-up message with
/// `AuthenticationCleartextPassword` (R, code 3) or `AuthenticationMD5Password` (R, code 5, a salt),
/// then records what the client sends until it hangs up — as another local user who bound the port
/// while PostgreSQL restarted would.
final class PasswordCatcher: @unchecked Sendable {
    /// What one client sent.
    struct Capture: Sendable {
        /// Every byte, in order.
        var bytes: [UInt8] = []
        var askedForTLS = false
        var sentStartup = false
        /// The type bytes of the messages after the start-up message (`p`: a password, `X`: terminate).
        var messageTypes: [UInt8] = []
    }

    let port: Int
    private let listener: Int32
    private let authenticationCode: Int32

    init(authenticationCode: Int32) throws {
        self.authenticationCode = authenticationCode
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw HarnessError("cannot listen on 127.0.0.1")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(listener) }

    /// Serves the next client to its end and returns what it sent; fails if none comes within `bound`.
    func nextClient(within bound: Duration = .seconds(600)) async throws -> Capture {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try self.serve(bound) }) }.start()
        }
    }

    private func serve(_ bound: Duration) throws -> Capture {
        let milliseconds = Int32(bound.components.seconds * 1000)
        var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&waiting, 1, milliseconds) == 1 else { throw HarnessError("no client connected to the fake server within \(bound)") }
        let client = accept(listener, nil, nil)
        guard client >= 0 else { throw HarnessError("accept failed") }
        defer { close(client) }
        var capture = Capture()
        // Start-up phase: untyped messages (length, then a code).
        while let message = read(client, count: nil, into: &capture, milliseconds) {
            let code = message.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if code == 80_877_103 {
                capture.askedForTLS = true
                send(client, [UInt8(ascii: "N")])
                continue
            }
            capture.sentStartup = true
            var request: [UInt8] = [UInt8(ascii: "R")] + bigEndian(authenticationCode == 5 ? 12 : 8) + bigEndian(authenticationCode)
            if authenticationCode == 5 { request += [0x5a, 0x11, 0x7a, 0x11] }
            send(client, request)
            // Typed messages until the client hangs up, or one message after the password (it waits for an answer).
            while let type = read(client, count: 1, into: &capture, milliseconds)?.first {
                capture.messageTypes.append(type)
                guard read(client, count: nil, into: &capture, milliseconds) != nil else { break }
                if type == UInt8(ascii: "p") || type == UInt8(ascii: "X") { break }
            }
            break
        }
        return capture
    }

    /// `count` bytes, or (nil) a length-prefixed message's body; nil at the end of the stream.
    private func read(_ fd: Int32, count: Int?, into capture: inout Capture, _ milliseconds: Int32) -> [UInt8]? {
        if let count { return readExactly(fd, count, into: &capture, milliseconds) }
        guard let length = readExactly(fd, 4, into: &capture, milliseconds) else { return nil }
        let total = Int(length.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard (4...65_536).contains(total) else { return nil }
        return readExactly(fd, total - 4, into: &capture, milliseconds)
    }

    private func readExactly(_ fd: Int32, _ count: Int, into capture: inout Capture, _ milliseconds: Int32) -> [UInt8]? {
        var bytes: [UInt8] = []
        while bytes.count < count {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, milliseconds) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: count - bytes.count)
            let got = Glibc.read(fd, &buffer, buffer.count)
            guard got > 0 else { return nil }
            bytes += buffer[..<got]
        }
        capture.bytes += bytes
        return bytes
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }

    private func bigEndian(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
}

/// A CA certificate (PEM), made with the openssl CLI in `directory`, mode 0644: a `ca_file` that
/// passes the file check but certifies no server the tests run.
func makeCAFile(in directory: String) throws -> String {
    let ca = directory + "/ca.crt"
    let (status, out, err) = try Subprocess.run(
        ["/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", directory + "/ca.key", "-out", ca, "-subj", "/CN=sortedvault test CA", "-days", "2"],
        environment: ["PATH": "/usr/bin:/bin"], input: Data())
    guard status == 0 else { throw HarnessError("openssl failed: \(String(decoding: err + out, as: UTF8.self))") }
    chmod(ca, 0o644)
    return ca
}

/// A new private directory under /tmp.
func temporaryDirectory() throws -> String {
    var template = Array("/tmp/sortedvault-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw HarnessError("mkdtemp failed") }
    return String(cString: made)
}
