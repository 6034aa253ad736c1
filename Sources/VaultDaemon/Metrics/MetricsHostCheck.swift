import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import NIOHTTP1
import VaultPolicy

/// Which `Host` a metrics request may name: on a TCP endpoint, its own address or `localhost`
/// (with its port, or none); any other name is refused with 421. A web page the owner visits can
/// make its own name resolve to 127.0.0.1 (DNS rebinding) and so reach the endpoint from the
/// browser, but the browser still sends the page's name as `Host`. A Unix socket is out of a
/// browser's reach: any `Host` is served there.
struct MetricsHostCheck: Sendable {
    /// The names served, lower case, and the port; nil for a Unix socket.
    private let allowed: (names: Set<String>, port: Int)?

    init(_ endpoint: MetricsEndpoint) {
        switch endpoint {
        case let .tcp(host, port): allowed = ([host.lowercased(), "localhost"], port)
        case .unixSocket: allowed = nil
        }
    }

    /// Whether `head` names this endpoint: exactly one `Host` header, naming an allowed host and
    /// no other port.
    func admits(_ head: HTTPRequestHead) -> Bool {
        guard let allowed else { return true }
        let values = head.headers["Host"]
        guard values.count == 1, let (name, port) = Self.split(values[0]) else { return false }
        return allowed.names.contains(name) && (port == nil || port == allowed.port)
    }

    /// `name`, `name:port`, `[v6]` or `[v6]:port`, lower-cased; nil when it is none of these.
    static func split(_ value: String) -> (name: String, port: Int?)? {
        // HTTP's optional white space (spaces and tabs) around the value, and nothing else.
        let text = String(value.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()).lowercased()
        let name: Substring, rest: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            name = text[text.index(after: text.startIndex)..<close]
            rest = text[text.index(after: close)...]
        } else if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            rest = text[colon...]
        } else {
            name = text[...]
            rest = ""
        }
        guard !name.isEmpty else { return nil }
        if rest.isEmpty { return (String(name), nil) }
        let digits = rest.dropFirst()
        guard rest.first == ":", (1...5).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(digits) else { return nil }
        return (String(name), port)
    }
}
