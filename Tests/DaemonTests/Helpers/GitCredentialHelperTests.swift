import Varlink
import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultCrypto

extension DaemonSuite {
    /// git 2.39 (Debian) with git-credential-sortedvault, against a live daemon, the test OAuth2
    /// provider and a loopback smart-HTTP git server that accepts only active access tokens.
    @Suite struct GitCredentialHelperTests {
        /// Plain `git` with no user or system configuration, never prompting.
        static func git(_ cli: CLIHarness, _ arguments: [String], helper: String, input: String = "") throws -> CLIHarness.Result {
            try cli.runProgram(["/usr/bin/git", "-c", "credential.helper=", "-c", "credential.helper=\(helper)"] + arguments,
                               input: Data(input.utf8),
                               extra: ["GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""])
        }

        @Test func gitFetchSucceedsAfterTheAccessTokenExpiresWhereCredentialCacheFails() async throws {
            let provider = try OAuthTestProvider(accessTokenSeconds: 6)
            let cli = try CLIHarness()
            try cli.writePolicy(settings: "[session]\nmin_valid_seconds = 1\nproactive_refresh_seconds = 0\n")
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let server = try GitHTTPServer(root: cli.root + "/git", provider: provider, environment: cli.environment)
            defer { server.stop() }
            let ours = try CLIHarness.sibling("git-credential-sortedvault")
            let cache = "cache --timeout=300 --socket=\(cli.root)/cache/socket"
            defer { _ = try? Self.git(cli, ["credential-cache", "--socket=\(cli.root)/cache/socket", "exit"], helper: "") }

            // Sign in once; the login goes to the daemon, the host is bound to it.
            let response = try await provider.signIn()
            guard case .object(let tokenResponse) = try JSONValue.parse(response), let firstToken = response.jsonField("access_token") else {
                throw HarnessError("the provider's token response has no access_token")
            }
            try await SessionClient(socketPath: cli.socket).save(tokenResponse: tokenResponse, provider: try provider.provider(),
                                                                  for: try ItemKey(service: "com.example.git", account: "ada"))
            let bind = try cli.run(["git", "bind", "http://\(server.hostAndPort)", "com.example.git", "ada"])
            #expect(bind.status == 0, "\(bind.stderr)")
            // credential-cache gets the same token, as a user would type it once.
            let approve = try Self.git(cli, ["credential", "approve"], helper: cache,
                                       input: "protocol=http\nhost=\(server.hostAndPort)\nusername=oauth2\npassword=\(firstToken)\n\n")
            #expect(approve.status == 0, "\(approve.stderr)")

            // While the token is valid both work.
            let oursClone = try Self.git(cli, ["clone", "-q", server.repositoryURL, cli.root + "/ours"], helper: ours)
            #expect(oursClone.status == 0, "\(oursClone.stderr)")
            let cacheClone = try Self.git(cli, ["clone", "-q", server.repositoryURL, cli.root + "/cached"], helper: cache)
            #expect(cacheClone.status == 0, "\(cacheClone.stderr)")
            #expect(try await provider.refreshRequests() == 0)

            // The provider's clock, not ours: wait until its introspection calls the token dead.
            let deadline = ContinuousClock.now + .seconds(30)
            while try await provider.isActive(firstToken), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(try await !provider.isActive(firstToken))

            let cacheFetch = try Self.git(cli, ["-C", cli.root + "/cached", "fetch"], helper: cache)
            #expect(cacheFetch.status != 0)
            #expect(cacheFetch.stderr.contains("Authentication failed") || cacheFetch.stderr.contains("terminal prompts disabled"),
                    "\(cacheFetch.stderr)")

            let oursFetch = try Self.git(cli, ["-C", cli.root + "/ours", "fetch"], helper: ours)
            #expect(oursFetch.status == 0, "\(oursFetch.stderr)")
            #expect(try await provider.refreshRequests() == 1)
            #expect(!(oursFetch.stderr + cacheFetch.stderr).contains(firstToken))
            cli.stopDaemon()
        }

        @Test func plainCredentialsAreStoredFilledAndErasedThroughGit() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let ours = try CLIHarness.sibling("git-credential-sortedvault")
            let approve = try Self.git(cli, ["credential", "approve"], helper: ours,
                                       input: "protocol=https\nhost=git.example.com\nusername=alice\npassword=pw-1\n\n")
            #expect(approve.status == 0, "\(approve.stderr)")
            #expect(try cli.run(["retrieve", "git:https://git.example.com", "alice"]).text == "pw-1")

            let fill = try Self.git(cli, ["credential", "fill"], helper: ours, input: "url=https://git.example.com/team/repo.git\n\n")
            #expect(fill.status == 0, "\(fill.stderr)")
            #expect(fill.text == "protocol=https\nhost=git.example.com\nusername=alice\npassword=pw-1\n")

            let reject = try Self.git(cli, ["credential", "reject"], helper: ours,
                                      input: "protocol=https\nhost=git.example.com\nusername=alice\npassword=pw-1\n\n")
            #expect(reject.status == 0, "\(reject.stderr)")
            #expect(try cli.run(["retrieve", "git:https://git.example.com", "alice"]).status == 1)
            cli.stopDaemon()
        }

        /// A bound host whose login is gone: no answer (git then fails, never prompting), and the
        /// helper says why on standard error; a plain password stored for that host is not used instead.
        @Test func aBoundHostWithoutAValidLoginGetsNoCredentialAndAReason() async throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let ours = try CLIHarness.sibling("git-credential-sortedvault")
            let key = try ItemKey(service: "com.example.git", account: "ada")
            let provider = try await Self.signIn(cli, key)
            #expect(try cli.run(["git", "bind", "https://git.example.com", "com.example.git", "ada"]).status == 0)
            #expect(try cli.run(["session", "logout", "com.example.git", "ada"]).status == 0)
            _ = provider
            #expect(try cli.run(["store", "git:https://git.example.com", "oauth2"], input: Data("stale-password".utf8)).status == 0)
            let fill = try Self.git(cli, ["credential", "fill"], helper: ours, input: "protocol=https\nhost=git.example.com\n\n")
            #expect(fill.status != 0)
            #expect(!fill.text.contains("stale-password"))
            #expect(fill.stderr.contains("sign in again for \"com.example.git\"/\"ada\""), "\(fill.stderr)")
            #expect(try cli.run(["git", "unbind", "https://git.example.com"]).status == 0)
            let plain = try Self.git(cli, ["credential", "fill"], helper: ours, input: "protocol=https\nhost=git.example.com\n\n")
            #expect(plain.text.contains("password=stale-password\n"))
            cli.stopDaemon()
        }

        /// Saves a login of `key` at a fresh test provider (kept alive by the caller).
        static func signIn(_ cli: CLIHarness, _ key: ItemKey) async throws -> OAuthTestProvider {
            let provider = try OAuthTestProvider()
            guard case .object(let response) = try JSONValue.parse(try await provider.signIn()) else { throw HarnessError("bad token response") }
            try await SessionClient(socketPath: cli.socket).save(tokenResponse: response, provider: try provider.provider(), for: key)
            return provider
        }

        /// Git sends the bound login's token as a password, so a binding is made only for
        /// https or plain http to this machine, and a binding to plain http elsewhere (made before
        /// the check) gets no token. A binding to a login that does not exist is refused.
        @Test func aLoginIsBoundOnlyToHTTPSOrLoopbackAndOnlyWhenItExists() async throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            let key = try ItemKey(service: "com.example.git", account: "ada")
            let missing = try cli.run(["git", "bind", "https://git.example.com", "com.example.none", "ada"])
            #expect(missing.status == 1 && missing.stderr.contains("there is no login"), "\(missing.status) \(missing.stderr)")
            let provider = try await Self.signIn(cli, key)
            _ = provider
            for url in ["http://git.example.com", "http://10.0.0.1:8080", "http://127.0.0.1.example.com", "ftp://git.example.com"] {
                let refused = try cli.run(["git", "bind", url, "com.example.git", "ada"])
                #expect(refused.status != 0 && refused.stderr.contains("https"), "\(url): \(refused.status) \(refused.stderr)")
            }
            for url in ["https://git.example.com", "http://127.0.0.1:8080", "http://localhost", "http://[::1]:9"] {
                let bound = try cli.run(["git", "bind", url, "com.example.git", "ada"])
                #expect(bound.status == 0, "\(url): \(bound.stderr)")
            }
            let httpBindings = try await cli.client.list().map(\.service).filter { $0.hasPrefix("git-login:http://") }
            #expect(Set(httpBindings) == ["git-login:http://127.0.0.1:8080", "git-login:http://localhost", "git-login:http://[::1]:9"])

            // A binding of plain http to another host, as an older version could make it.
            let options = try StoreOptions(label: "git login binding", attributes: ["session.service": key.service, "session.account": key.account])
            try await cli.client.store(SecureBytes(copying: Array("sortedvault git login binding".utf8)),
                                       for: try ItemKey(service: "git-login:http://git.example.com", account: "oauth2"), options: options)
            let ours = try CLIHarness.sibling("git-credential-sortedvault")
            let fill = try Self.git(cli, ["credential", "fill"], helper: ours, input: "protocol=http\nhost=git.example.com\n\n")
            #expect(fill.status != 0)
            #expect(!fill.text.contains("password="), "the token was sent for plain http: \(fill.text)")
            #expect(fill.stderr.contains("in clear over http"), "\(fill.stderr)")
        }

        @Test func injectionAttemptsAreRefusedAndNoSecretIsEchoed() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let ours = try CLIHarness.sibling("git-credential-sortedvault")
            #expect(try cli.run(["store", "git:http://127.0.0.1", "alice"], input: Data("kept-secret".utf8)).status == 0)

            let attempts: [(String, String)] = [
                ("get", "protocol=http\nhost=127.0.0.1\r\n\n"),                          // CR smuggled in host
                ("get", "protocol=http\nhost=127.0.0.1\u{0}evil.example\n\n"),           // NUL in host
                ("get", "url=http://127.0.0.1%0ahost=evil.example/\n\n"),                // CVE-2020-5260: encoded newline
                ("get", "url=http://alice:stolen-password@127.0.0.1/repo.git\n\n"),      // credentials in the URL
                ("store", "protocol=http\nhost=127.0.0.1\nusername=al\rice\npassword=x\n\n"),
            ]
            for (action, input) in attempts {
                let result = try cli.runProgram([ours, action], input: Data(input.utf8))
                #expect(result.status == 1, "\(input.debugDescription): \(result.status) \(result.text)")
                #expect(result.stdout.isEmpty, "\(input.debugDescription) answered \(result.text)")
                #expect(result.stderr.contains("refusing"), "\(result.stderr)")
                #expect(!result.stderr.contains("kept-secret") && !result.stderr.contains("stolen-password"))
            }
            // git itself refuses the encoded newline before any helper runs.
            let viaGit = try Self.git(cli, ["credential", "fill"], helper: ours, input: "url=http://127.0.0.1%0ahost=evil.example/\n\n")
            #expect(viaGit.status != 0)
            #expect(!viaGit.text.contains("kept-secret"))

            // A stored secret that git's protocol cannot carry is refused, not echoed.
            #expect(try cli.run(["store", "git:http://10.0.0.1", "bob"], input: Data("line1\nhost=evil\n".utf8)).status == 0)
            let broken = try cli.runProgram([ours, "get"], input: Data("protocol=http\nhost=10.0.0.1\n\n".utf8))
            #expect(broken.status == 1)
            #expect(broken.stdout.isEmpty)
            #expect(!broken.stderr.contains("line1"))
            cli.stopDaemon()
        }
    }
}
