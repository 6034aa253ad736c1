import Foundation  // the benchmark client, never installed: String(format:) for its tables needs full Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The benchmark's side of ``StubProvider``'s control endpoints: one request per connection
/// (`Connection: close`), the answer read to its end (at most 64 KiB).
enum StubControl {
    struct Counts {
        var refreshes = 0
        var doubleRefreshes = 0
        var invalidGrants = 0

        static func - (a: Counts, b: Counts) -> Counts {
            Counts(refreshes: a.refreshes - b.refreshes, doubleRefreshes: a.doubleRefreshes - b.doubleRefreshes,
                   invalidGrants: a.invalidGrants - b.invalidGrants)
        }
    }

    static func counts(port: Int) throws -> Counts {
        let body = try call(port: port, method: "GET", target: "/stats")
        guard let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
              let refreshes = object["refreshes"] as? Int, let doubles = object["doubleRefreshes"] as? Int,
              let invalid = object["invalidGrants"] as? Int else {
            throw BenchError("the stub provider's /stats is not its counts")
        }
        return Counts(refreshes: refreshes, doubleRefreshes: doubles, invalidGrants: invalid)
    }

    /// A token response as a sign-in gives it, for `Save`.
    static func issue(port: Int, expiresIn: Int) throws -> String {
        try call(port: port, method: "POST", target: "/issue?expires_in=\(expiresIn)")
    }

    /// Returns the body of a 200 answer; throws with the status otherwise.
    static func call(port: Int, method: String, target: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw BenchError("cannot connect to the stub provider on 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        let request = Array("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ write(fd, $0.baseAddress!, $0.count) }) == request.count else {
            throw BenchError("cannot send to the stub provider")
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            guard n > 0 else { break }
            answer += chunk[0..<n]
            guard answer.count <= 64 << 10 else { throw BenchError("the stub provider's answer is over 64 KiB") }
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw BenchError("the stub provider's answer has no header end") }
        let status = text[..<split.lowerBound].split(separator: " ").dropFirst().first.flatMap { Int($0) }
        guard status == 200 else { throw BenchError("the stub provider answered \(method) \(target) with status \(status.map(String.init) ?? "none")") }
        return String(text[split.upperBound...])
    }
}
