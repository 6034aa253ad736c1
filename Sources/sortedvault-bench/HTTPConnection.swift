import Foundation  // the benchmark client, never installed: String(format:) for its tables needs full Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One request of ``HTTPConnection``: what the stub provider routes on.
struct HTTPRequest {
    let method: String
    /// The path, without the query.
    let path: String
    let query: [String: String]
    let body: [UInt8]
    let keepAlive: Bool
}

/// A blocking HTTP/1.1 server connection: reads requests one after another (keep-alive, pipelined
/// bytes kept) and writes each answer in one `write`. Bounded: a header section over 8 KiB, more
/// than 64 header lines, a body over 8 KiB, a chunked body or a malformed line ends the connection
/// with 400 (fail closed; the stub serves the daemons of one benchmark, never a browser).
final class HTTPConnection {
    static let maximumHeaderBytes = 8192
    static let maximumHeaderLines = 64
    static let maximumBodyBytes = 8192

    enum Next {
        case request(HTTPRequest)
        /// The peer closed the connection (or the read failed) between requests.
        case closed
        /// The request broke a rule; the text says which, for the 400 answer.
        case refused(String)
    }

    private let fd: Int32
    private var pending: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    func next() -> Next {
        var headerEnd: Int?
        while true {
            if let end = Self.endOfHeaders(pending) { headerEnd = end; break }
            guard pending.count <= Self.maximumHeaderBytes else { return .refused("the header section is longer than \(Self.maximumHeaderBytes) bytes") }
            guard fill() else { return pending.isEmpty ? .closed : .refused("the connection closed inside a request") }
        }
        let head = String(decoding: pending[0..<headerEnd!], as: UTF8.self)
        pending.removeFirst(headerEnd! + 4)
        let lines = head.components(separatedBy: "\r\n")
        guard lines.count <= Self.maximumHeaderLines else { return .refused("more than \(Self.maximumHeaderLines) header lines") }
        let requestLine = lines[0].split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0" else {
            return .refused("the request line is not METHOD TARGET HTTP/1.x")
        }
        var contentLength = 0
        var keepAlive = requestLine[2] == "HTTP/1.1"
        var expectContinue = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return .refused("a header line has no colon") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "content-length":
                guard let length = Int(value), length >= 0 else { return .refused("Content-Length is not a number") }
                guard length <= Self.maximumBodyBytes else { return .refused("the body is longer than \(Self.maximumBodyBytes) bytes") }
                contentLength = length
            case "transfer-encoding":
                return .refused("Transfer-Encoding is not accepted; send Content-Length")
            case "connection":
                let token = value.lowercased()
                if token == "close" { keepAlive = false } else if token == "keep-alive" { keepAlive = true }
            case "expect":
                expectContinue = value.lowercased() == "100-continue"
            default:
                break
            }
        }
        if expectContinue && contentLength > pending.count { send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
        while pending.count < contentLength {
            guard fill() else { return .refused("the connection closed inside a body") }
        }
        let body = Array(pending[0..<contentLength])
        pending.removeFirst(contentLength)
        let target = String(requestLine[1])
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let query = parts.count > 1 ? FormBody.decode(Array(parts[1].utf8)) : [:]
        return .request(HTTPRequest(method: String(requestLine[0]), path: String(parts[0]), query: query, body: body, keepAlive: keepAlive))
    }

    /// Writes one whole answer; Content-Length always, `Connection: close` when the connection ends after it.
    func answer(status: Int, _ body: String, keepAlive: Bool) {
        let reason = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"][status] ?? "Error"
        let bodyBytes = Array(body.utf8)
        let head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
            + "Content-Length: \(bodyBytes.count)\r\n\(keepAlive ? "" : "Connection: close\r\n")\r\n"
        send(Array(head.utf8) + bodyBytes)
    }

    private func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            guard n > 0 else { return }
            offset += n
        }
    }

    /// Reads what is there into `pending`; false at end of stream or on an error (a receive timeout too).
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard n > 0 else { return false }
        pending += chunk[0..<n]
        return true
    }

    private static func endOfHeaders(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }
}

/// `application/x-www-form-urlencoded` (and a query string) into names and values; a name given
/// twice keeps its first value. Undecodable escapes are kept as they are.
enum FormBody {
    static func decode(_ bytes: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in bytes.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = percentDecoded(parts[0])
            if fields[name] == nil { fields[name] = parts.count > 1 ? percentDecoded(parts[1]) : "" }
        }
        return fields
    }

    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), i + 2 < bytes.endIndex,
                      let value = UInt8(String(decoding: bytes[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                out.append(value)
                i += 2
            } else {
                out.append(byte)
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
