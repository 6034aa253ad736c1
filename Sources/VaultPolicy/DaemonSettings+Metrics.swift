/// The `[metrics]` table of `settings.toml`: where the daemon serves its metrics to Prometheus
/// (docs/daemon.md, "Metrics"). Off unless the table is there.
///
/// ```toml
/// [metrics]
/// listen = "127.0.0.1:9464"          # or "[::1]:9464", or "unix:/run/sortedvault/metrics.sock"
/// ```
///
/// Only this host may scrape: an address outside the loopback range is refused, since the endpoint
/// has no TLS and no authentication of its own. Put a proxy that has both in front of it to scrape
/// from elsewhere.
public enum MetricsEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// A loopback address (127.0.0.0/8 or ::1) and a port.
    case tcp(host: String, port: Int)
    /// A Unix socket, created with the daemon's umask (0600: only the daemon's user may scrape).
    case unixSocket(path: String)

    public var description: String {
        switch self {
        case let .tcp(host, port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case let .unixSocket(path): "unix:\(path)"
        }
    }

    /// The longest path a Unix socket address holds (`sun_path`, less its NUL).
    static let maxSocketPath = 107

    /// Parses a `listen` value; the error text says what to write instead.
    public static func parse(_ text: String) -> Result<MetricsEndpoint, ListenError> {
        let hint = "write listen = \"127.0.0.1:9464\", \"[::1]:9464\" or \"unix:/run/sortedvault/metrics.sock\""
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/") else { return .failure(ListenError("listen = \"\(text)\" needs an absolute socket path; \(hint)")) }
            guard path.utf8.count <= maxSocketPath else {
                return .failure(ListenError("listen = \"\(text)\": a Unix socket path holds at most \(maxSocketPath) bytes; choose a shorter one"))
            }
            return .success(.unixSocket(path: path))
        }
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(ListenError("listen = \"\(text)\" is not ADDRESS:PORT; \(hint)"))
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return .failure(ListenError("listen = \"\(text)\" has no port; \(hint)")) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard portText.allSatisfy(\.isASCII), let port = Int(portText), (1...65535).contains(port) else {
            return .failure(ListenError("listen = \"\(text)\" has no port from 1 to 65535; \(hint)"))
        }
        guard isLoopback(host) else {
            return .failure(ListenError("listen = \"\(text)\" is not a loopback address: the metrics endpoint has no TLS and no authentication, so it serves this host only; \(hint), and scrape from elsewhere through a proxy that has both"))
        }
        return .success(.tcp(host: String(host), port: port))
    }

    /// 127.0.0.0/8 written as four decimal parts, or ::1 (names are not resolved: a name could lead elsewhere).
    static func isLoopback(_ host: Substring) -> Bool {
        if host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        let octets = parts.compactMap { part -> Int? in
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(part), value <= 255 else { return nil }
            return value
        }
        return octets.count == 4 && octets[0] == 127
    }

    public struct ListenError: Error, Sendable {
        public let message: String
        init(_ message: String) { self.message = message }
    }
}

extension DaemonSettings {
    /// `[metrics]` with its one key, `listen`.
    static func parseMetrics(_ reader: TOMLTableReader, into settings: inout DaemonSettings) throws {
        guard let table = try reader.subtable("metrics") else { return }
        try table.rejectUnknownKeys(["listen"])
        let text = try table.string("listen", try table.required("listen", example: "\"127.0.0.1:9464\""), example: "\"127.0.0.1:9464\"")
        switch MetricsEndpoint.parse(text) {
        case .success(let endpoint): settings.metrics = endpoint
        case .failure(let error): throw table.invalid("listen", error.message)
        }
    }
}
