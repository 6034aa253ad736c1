import Foundation  // the benchmark client, never installed: String(format:) for its tables needs full Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault-bench provider PORT_FILE [EXPIRES_IN]`: a fast OAuth2 token endpoint for the fleet
/// benchmark (`scripts/bench --fleet`), so that the daemons, not the provider, are what is measured.
/// It listens on 127.0.0.1 (a free port, written to PORT_FILE once it listens), one thread per
/// connection, keep-alive, and serves:
///
/// - `POST /token`: RFC 6749 refresh (`grant_type=refresh_token`) with rotation. Each refresh token
///   it issued is good once; a token used again is a **double refresh**: counted, and answered
///   `invalid_grant` as a strict provider does. An access token lives EXPIRES_IN seconds (61 unless
///   given: one second past the daemons' default `min_valid_seconds`, so a login is due again soon).
/// - `POST /issue?expires_in=N`: a new token pair, as a sign-in would give; what the benchmark saves.
/// - `GET /stats`: `{"refreshes":…,"doubleRefreshes":…,"invalidGrants":…,"issued":…}`.
///
/// The tokens are random and mean nothing outside one run; the stub is for benchmarks only.
final class StubProvider: @unchecked Sendable {
    /// At most this many connections at once; more are closed at accept.
    static let maximumConnections = 256

    private let expiresIn: Int
    // Invariant: everything below is touched only under `lock`.
    private let lock = NSLock()
    private var live: Set<String> = []
    private var used: Set<String> = []
    private var refreshes = 0
    private var doubleRefreshes = 0
    private var invalidGrants = 0
    private var issued = 0
    private var connections = 0

    init(expiresIn: Int) { self.expiresIn = expiresIn }

    static func run(portFile: String, expiresIn: Int) throws -> Never {
        let provider = StubProvider(expiresIn: expiresIn)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 512) == 0 else { throw BenchError("the stub provider cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))") }
        let port = Int(UInt16(bigEndian: address.sin_port))
        try "\(port)\n".write(toFile: portFile + ".tmp", atomically: false, encoding: .utf8)
        guard rename(portFile + ".tmp", portFile) == 0 else { throw BenchError("cannot write \(portFile)") }
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard provider.admit() else { close(fd); continue }
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            // A connection idle for a minute is closed, so a daemon that vanished holds no thread.
            var idle = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, socklen_t(MemoryLayout<timeval>.size))
            let thread = Thread { provider.serve(fd) }
            thread.stackSize = 256 << 10
            thread.start()
        }
    }

    private func admit() -> Bool {
        lock.withLock {
            guard connections < Self.maximumConnections else { return false }
            connections += 1
            return true
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            close(fd)
            lock.withLock { connections -= 1 }
        }
        let connection = HTTPConnection(fd: fd)
        while true {
            switch connection.next() {
            case .closed:
                return
            case .refused(let reason):
                connection.answer(status: 400, #"{"error":"invalid_request","error_description":"\#(reason)"}"#, keepAlive: false)
                return
            case .request(let request):
                let (status, body) = route(request)
                connection.answer(status: status, body, keepAlive: request.keepAlive)
                if !request.keepAlive { return }
            }
        }
    }

    private func route(_ request: HTTPRequest) -> (Int, String) {
        switch (request.method, request.path) {
        case ("POST", "/token"):
            return refresh(FormBody.decode(request.body))
        case ("POST", "/issue"):
            let lifetime = request.query["expires_in"].flatMap { Int($0) }.map { min(max($0, 1), 86400 * 365) } ?? expiresIn
            return (200, lock.withLock { issue(expiresIn: lifetime) })
        case ("GET", "/stats"):
            return (200, lock.withLock {
                #"{"refreshes":\#(refreshes),"doubleRefreshes":\#(doubleRefreshes),"invalidGrants":\#(invalidGrants),"issued":\#(issued)}"#
            })
        case (_, "/token"), (_, "/issue"), (_, "/stats"):
            return (405, #"{"error":"invalid_request","error_description":"method not allowed"}"#)
        default:
            return (404, #"{"error":"invalid_request","error_description":"no such endpoint"}"#)
        }
    }

    /// RFC 6749 section 6, with rotation: the token is spent by this use, whatever follows.
    private func refresh(_ form: [String: String]) -> (Int, String) {
        guard form["grant_type"] == "refresh_token" else {
            return (400, #"{"error":"unsupported_grant_type","error_description":"only grant_type=refresh_token is served"}"#)
        }
        guard let token = form["refresh_token"], !token.isEmpty else {
            return (400, #"{"error":"invalid_request","error_description":"refresh_token is missing"}"#)
        }
        return lock.withLock {
            if live.remove(token) != nil {
                used.insert(token)
                refreshes += 1
                return (200, issue(expiresIn: expiresIn))
            }
            if used.contains(token) { doubleRefreshes += 1 }
            invalidGrants += 1
            return (400, #"{"error":"invalid_grant","error_description":"the refresh token was used before or never issued"}"#)
        }
    }

    /// A new access token and refresh token; the caller holds `lock`.
    private func issue(expiresIn: Int) -> String {
        let refreshToken = "r-" + Self.randomHex()
        live.insert(refreshToken)
        issued += 1
        return #"{"access_token":"a-\#(Self.randomHex())","token_type":"Bearer","expires_in":\#(expiresIn),"refresh_token":"\#(refreshToken)"}"#
    }

    private static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        return String(format: "%016llx%016llx", high, low)
    }
}
