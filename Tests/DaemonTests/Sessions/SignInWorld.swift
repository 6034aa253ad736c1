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
}
