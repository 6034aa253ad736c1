import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore

extension DaemonSuite {
    /// `sortedvault session login --kind supabase --provider github`: GoTrue's PKCE flow end to end,
    /// the real CLI (browser flow, its loopback listener) and daemon against the GoTrue stand-in, whose
    /// stand-in for GitHub approves at once; a client that follows redirects plays the browser.
    @Suite struct GoTrueSignInDaemonTests {
        @Test func aGitHubSignInThroughGoTrueIsExchangedWithTheVerifierAndStored() async throws {
            let gotrue = try ProviderServer(.supabase)
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { _ = cli.stopDaemon() }
            try (gotrue.apiKey ?? "").write(toFile: cli.root + "/anon-key", atomically: true, encoding: .utf8)
            var environment = cli.environment
            for name in ["DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION"] { environment[name] = nil }
            environment["BROWSER"] = "/bin/true"
            let login = try BackgroundCommand(
                ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3<\"$ANON_KEY\"", CLIHarness.executable, "session", "login", "com.sorted.api",
                 "--flow", "browser", "--kind", "supabase", "--url", gotrue.base, "--api-key-fd", "3", "--provider", "github",
                 "--timeout", "120", "--no-autostart"],
                environment: environment.merging(["ANON_KEY": cli.root + "/anon-key"]) { _, new in new }, directory: cli.root)
            let text = try login.waitForStandardError { $0.contains("Open this URL") && $0.contains("\n\n  http") && $0.hasSuffix("\n") }
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("  http") })
            let url = line.trimmingCharacters(in: .whitespaces)
            #expect(url.hasPrefix(gotrue.base + "/auth/v1/authorize?"), "\(url)")

            let browser = "import httpx, sys; r = httpx.get(sys.argv[1], follow_redirects=True); print(r.status_code, r.text)"
            let (status, out, err) = try Subprocess.run([ProviderServer.python, "-c", browser, url],
                                                        environment: ProcessInfo.processInfo.environment, input: Data())
            #expect(status == 0 && String(decoding: out, as: UTF8.self).contains("Signed in"),
                    "\(String(decoding: out, as: UTF8.self)) \(String(decoding: err, as: UTF8.self))")
            #expect(login.wait() == 0, "\(login.standardError)")
            // No account given: stored under the e-mail GoTrue's answer names as confirmed for the GitHub user.
            #expect(login.standardOutput.contains("signed in: com.sorted.api ada@example.com"), "\(login.standardOutput)")
            let stored = try await SessionClient(socketPath: cli.socket).status(try ItemKey(service: "com.sorted.api", account: "ada@example.com"))
            #expect(stored.hasRefreshToken && stored.providerKind == "supabase")

            // The official client, against the same stand-in in the same run: its PKCE flow agrees.
            let script = ProviderServer.supportDirectory + "/gotrue-standin/official_client_check.py"
            let check = try Subprocess.run([ProviderServer.python, script, "--url", gotrue.base, "--anon-key-file", gotrue.stateDirectory + "/anon-key"],
                                           environment: ProcessInfo.processInfo.environment, input: Data())
            #expect(check.0 == 0, "supabase-auth disagrees:\n\(String(decoding: check.1, as: UTF8.self))")
        }
    }
}
