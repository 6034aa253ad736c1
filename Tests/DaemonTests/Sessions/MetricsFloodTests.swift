import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// What another local user can do to the metrics endpoint on 127.0.0.1 (issue 34, points 1 and 6):
    /// hold connections (only a few are taken, the rest are answered 503 and closed, and the daemon
    /// keeps serving its owner), and reach it from a browser through DNS rebinding (refused by `Host`).
    @Suite struct MetricsFloodTests {
        /// A one-host daemon started with a soft limit of 128 descriptors (systemd's 1,024 in small),
        /// its metrics on a loopback port.
        static func daemon(softDescriptorLimit: Int? = nil) throws -> (cli: CLIHarness, port: Int) {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            let port = try LoopbackHTTP.portFreeOnIPv4Loopback()
            try cli.writePolicy(settings: "[metrics]\nlisten = \"127.0.0.1:\(port)\"\n")
            var hard = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &hard)
            let prefix = softDescriptorLimit.map { ["/usr/bin/prlimit", "--nofile=\($0):\(hard.rlim_max)", "--"] } ?? []
            try cli.startDaemon(prefix: prefix)
            return (cli, port)
        }

        @Test func connectionsOverTheCapAreRefusedAndTheOwnerIsStillServed() throws {
            let (cli, port) = try Self.daemon(softDescriptorLimit: 128)
            defer { cli.stopDaemon() }
            #expect(try cli.run(["store", "com.example.api", "ada"], input: Data("s3cret".utf8)).status == 0)

            // The daemon raised its soft limit to the hard one at start.
            let pid = try #require(cli.daemon?.pid)
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
            let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            #expect(fields.count >= 5 && fields[3] == fields[4], "the daemon kept a soft limit below its hard one: \(line)")

            // Eight keep-alive connections, each answered once: the cap is taken.
            var held: [HTTPConnection] = []
            defer { held.forEach { $0.close() } }
            for _ in 0..<MetricsCap.connections {
                let connection = try HTTPConnection(port: port)
                held.append(connection)
                let answer = try connection.exchange(host: "127.0.0.1:\(port)")
                #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "a connection within the cap was not served: \(answer.prefix(200))")
            }
            // Every further one is refused at once (a 503, or closed), never kept.
            for index in 0..<16 {
                let extra = try HTTPConnection(port: port)
                defer { extra.close() }
                let answer = try extra.exchange(host: "127.0.0.1:\(port)", readToEnd: true)
                let refused = answer.hasPrefix("HTTP/1.1 503") || answer.isEmpty
                #expect(refused, "connection \(MetricsCap.connections + index + 1) over the cap was served: \(answer.prefix(200))")
                if !refused { break }
            }
            // A flood that stays connected without a word: it holds no more than the cap either.
            var flood: [HTTPConnection] = []
            defer { flood.forEach { $0.close() } }
            for _ in 0..<200 {
                guard let connection = try? HTTPConnection(port: port) else { break }
                flood.append(connection)
            }
            let retrieved = try cli.run(["retrieve", "com.example.api", "ada"])
            #expect(retrieved.status == 0 && retrieved.text == "s3cret", "the owner was not served during the flood: \(retrieved.stderr)")

            // Once the held connections close, their slots are free again. The flood goes first: a
            // connection of it still waiting in the listen queue would take a freed slot until the
            // idle timeout (a busy daemon accepts them late), which is right but not what this checks.
            flood.forEach { $0.close() }
            flood = []
            held.forEach { $0.close() }
            held = []
            var served = false
            let giveUp = ContinuousClock.now + .seconds(600)  // a hang guard: each try waits for the daemon's answer
            while !served && ContinuousClock.now < giveUp {
                served = (try? LoopbackHTTP.get(port: port, "/metrics").status) == "HTTP/1.1 200 OK"
                if !served { usleep(20_000) }
            }
            #expect(served, "no scrape was served after the held connections closed")
        }

        @Test func aRequestNamingAnotherHostIsRefused() throws {
            let (cli, port) = try Self.daemon()
            defer { cli.stopDaemon() }
            for host in ["localhost:\(port)", "127.0.0.1:\(port)", "LOCALHOST", "127.0.0.1"] {
                let answer = try HTTPConnection(port: port).exchange(host: host, readToEnd: true)
                #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "Host: \(host) was refused: \(answer.prefix(200))")
            }
            // A page on attacker.example that rebound its name to 127.0.0.1: the browser sends its own name.
            for host in ["attacker.example:\(port)", "attacker.example", "127.0.0.1:\(port + 1)", "localhost.attacker.example", "",
                         "127.0.0.1:\(port)@attacker.example"] {
                let answer = try HTTPConnection(port: port).exchange(host: host, readToEnd: true)
                #expect(answer.hasPrefix("HTTP/1.1 421"), "Host: \(host) was not refused: \(answer.prefix(200))")
                #expect(!answer.contains("sortedvault_"), "Host: \(host) was given the metrics")
            }
            let noHost = try HTTPConnection(port: port).send("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n", readToEnd: true)
            #expect(noHost.hasPrefix("HTTP/1.1 4") && !noHost.contains("sortedvault_"), "a request without Host was served: \(noHost.prefix(200))")
        }
    }

    /// The endpoint's cap, as the daemon sets it (``MetricsServer/maxConnections``).
    enum MetricsCap {
        static let connections = 8
    }

    /// One TCP connection to 127.0.0.1:`port`, blocking, with 20 s bounds on connect and on every read.
    final class HTTPConnection {
        private var fd: Int32

        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw HarnessError("socket(): \(String(cString: strerror(errno)))") }
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard LoopbackHTTP.withAddress(ipv6: false, port: port, { connect(fd, $0, $1) }) == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(fd)
                fd = -1
                throw HarnessError("cannot connect to 127.0.0.1:\(port): \(reason)")
            }
        }

        /// GET /metrics naming `host`; keeps the connection unless `readToEnd`.
        func exchange(host: String, readToEnd: Bool = false) throws -> String {
            try send("GET /metrics HTTP/1.1\r\nHost: \(host)\r\nConnection: \(readToEnd ? "close" : "keep-alive")\r\n\r\n",
                     readToEnd: readToEnd)
        }

        /// Sends `request`; reads one answer (by its Content-Length), or everything until the server
        /// closes (a reset counts as closed). Throws when a read runs past its 20 s bound.
        func send(_ request: String, readToEnd: Bool) throws -> String {
            let bytes = Array(request.utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            var response = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 16384)
            while readToEnd || !Self.complete(response) {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    throw HarnessError("no answer within 20 s (got \(response.count) bytes)")
                }
                if n <= 0 { break }
                response += buffer[0..<n]
            }
            return String(decoding: response, as: UTF8.self)
        }

        /// Whether `response` holds a whole answer: its head and Content-Length bytes of body.
        private static func complete(_ response: [UInt8]) -> Bool {
            let text = String(decoding: response, as: UTF8.self)
            guard let end = text.range(of: "\r\n\r\n") else { return false }
            let head = text[..<end.lowerBound].lowercased()
            guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                  let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else { return true }
            return text[end.upperBound...].utf8.count >= length
        }

        func close() {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }

        deinit { close() }
    }
}
