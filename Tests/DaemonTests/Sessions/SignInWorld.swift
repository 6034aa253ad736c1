import Foundation
import TestSupport
import Testing
import VaultClient

#if canImport(Glibc)
import Glibc
#endif

/// What the sign-in tests share: a daemon with a key-file vault, django-oauth-toolkit with OpenID
/// Connect (its public client `sorted-cli`), the real CLI run in the background, and headless
/// Chromium driven by selenium (`Tests/Support/browser-login/browser_login.py`).
final class SignInWorld: @unchecked Sendable {
    let cli: CLIHarness
    let provider: OAuthTestProvider
    let service = "com.sorted.api"
    var sessions: SessionClient { SessionClient(socketPath: cli.socket, timeout: .seconds(30)) }

    init(access: String? = nil, deviceInterval: Int? = nil, session: String = "") throws {
        provider = try OAuthTestProvider(deviceInterval: deviceInterval)
        cli = try CLIHarness(autostart: false)
        try cli.initKeyFileVault()
        try cli.writePolicy(access: access, settings: "[session]\nproactive_refresh_seconds = 0\n" + session)
        try cli.startDaemon()
        try ProviderServer.password.write(toFile: cli.root + "/password", atomically: true, encoding: .utf8)
    }

    deinit { _ = cli.stopDaemon() }

    /// The provider options of `session login` for the public OIDC client.
    var providerArguments: [String] {
        ["--kind", "oidc", "--issuer", provider.issuer.absoluteString, "--client-id", "sorted-cli"]
    }

    /// The CLI's environment with no display and no browser: `xdg-open` finds nothing to start.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = cli.environment
        for name in ["DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION"] { environment[name] = nil }
        environment["BROWSER"] = "/bin/true"
        return environment.merging(extra) { _, new in new }
    }

    /// Starts `sortedvault session login SERVICE ARGUMENTS…`.
    func login(_ arguments: [String], environment: [String: String]? = nil) throws -> BackgroundCommand {
        try BackgroundCommand([CLIHarness.executable, "session", "login", service] + arguments + providerArguments
                              + ["--scope", "read", "--timeout", "120", "--no-autostart"],
                              environment: environment ?? self.environment(), directory: cli.root)
    }

    /// The URL the CLI printed on standard error.
    func printedURL(_ command: BackgroundCommand) throws -> URL {
        let text = try command.waitForStandardError { $0.contains("Open this URL") && $0.contains("\n\n  http") && $0.hasSuffix("\n") }
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("  http") })
        return try #require(URL(string: line.trimmingCharacters(in: .whitespaces)))
    }

    static func parameter(_ name: String, of url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    /// Signs in as ada in headless Chromium at `url` and returns where the browser ended and the page's text.
    /// `device`: `url` is a device sign-in's verification page; the browser approves (or denies) its code.
    func browse(_ url: URL, deny: Bool = false, device: Bool = false) throws -> (finalURL: String, body: String) {
        let argv = [ProviderServer.python, ProviderServer.supportDirectory + "/browser-login/browser_login.py", url.absoluteString,
                    "--password-file", cli.root + "/password", "--profile-dir", cli.root + "/chromium-\(UUID().uuidString.prefix(6))"]
            + (deny ? ["--deny"] : []) + (device ? ["--device"] : [])
        let (status, out, err) = try Subprocess.run(argv, environment: ProcessInfo.processInfo.environment, input: Data())
        guard status == 0, let object = try JSONSerialization.jsonObject(with: out) as? [String: String],
              let final = object["final_url"], let body = object["body"] else {
            throw HarnessError("the browser did not get through (\(status)): \(String(decoding: err, as: UTF8.self).suffix(3000))")
        }
        return (final, body)
    }

    /// The TCP sockets listening on `port`, as /proc/net/tcp names their local address (e.g. `0100007F`).
    static func listeners(on port: Int) -> [String] {
        let suffix = String(format: ":%04X", port)
        var found: [String] = []
        for (file, prefix) in [("/proc/net/tcp", ""), ("/proc/net/tcp6", "v6:")] {
            let table = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 3, fields[1].hasSuffix(suffix), fields[3] == "0A" else { continue }
                found.append(prefix + String(fields[1].dropLast(suffix.count)))
            }
        }
        return found
    }

    /// One GET to 127.0.0.1:`port` (`ipv6`: [::1]:`port`) with `target`; the response's status line and whole text.
    static func get(port: Int, _ target: String, ipv6: Bool = false) throws -> (status: String, response: String) {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard loopback(ipv6: ipv6, port: port, { connect(fd, $0, $1) }) == 0 else {
            throw HarnessError("cannot connect to \(ipv6 ? "[::1]" : "127.0.0.1"):\(port): \(String(cString: strerror(errno)))")
        }
        let request = Array("GET \(target) HTTP/1.1\r\nHost: localhost:\(port)\r\nUser-Agent: test\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        let text = String(decoding: response, as: UTF8.self)
        return (text.components(separatedBy: "\r\n").first ?? "", text)
    }

    /// Calls `body` with the address of 127.0.0.1 (`ipv6`: ::1) and `port`.
    static func loopback(ipv6: Bool, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            address.sin6_addr = in6addr_loopback
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }

    /// A port free on both 127.0.0.1 and ::1 just now, or nil when this host has no IPv6 loopback.
    static func portFreeOnBothLoopbacks() -> Int? {
        for _ in 0..<20 {
            let v4 = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0), v6 = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(v4); close(v6) }
            guard loopback(ipv6: false, port: 0, { bind(v4, $0, $1) }) == 0 else { return nil }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(v4, $0, &length) } }
            let port = Int(UInt16(bigEndian: address.sin_port))
            var one: Int32 = 1
            setsockopt(v6, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            if loopback(ipv6: true, port: port, { bind(v6, $0, $1) }) == 0 { return port }
            if errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT { return nil }
        }
        return nil
    }
}
