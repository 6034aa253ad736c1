import Foundation
import TestSupport
import GRDB
import Synchronization
import Testing
import Varlink
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession
import VaultTesting

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Logins through the real daemon process and its socket, against the real OAuth2 provider. The
    /// daemon reads the test's manual clock from a file; proactive refresh is off (a setting) so that
    /// only the calls the test makes reach the provider.
    @Suite struct SessionDaemonTests {
        final class World: @unchecked Sendable {
            let cli: CLIHarness
            let provider: OAuthTestProvider
            let clock: ManualClock
            let clockFile: String
            let key = try! ItemKey(service: "com.sorted.api", account: "ada")
            var sessions: SessionClient { SessionClient(socketPath: cli.socket, timeout: .seconds(20)) }

            /// - Parameters:
            ///   - proactive: keep the daemon's proactive refresh on (the shipped default).
            ///   - access: the access policy's text; the shipped one when nil.
            ///   - settings: more of settings.toml (tables after `[session]`).
            init(proactive: Bool = false, access: String? = nil, settings: String = "") throws {
                cli = try CLIHarness()
                try cli.initKeyFileVault()
                try cli.writePolicy(access: access, settings: "[session]\nproactive_refresh_seconds = \(proactive ? 60 : 0)\n" + settings)
                let clockFile = cli.root + "/clock"
                self.clockFile = clockFile
                clock = ManualClock(start: Date()) { date in
                    try? "\(date.timeIntervalSince1970)".write(toFile: clockFile, atomically: true, encoding: .utf8)
                }
                provider = try OAuthTestProvider()
                try startDaemon()
            }

            func startDaemon() throws {
                try cli.startDaemon(extraArguments: ["--unsafe-clock-file", clockFile])
            }

            /// Signs in at the provider and saves the login through the socket API.
            @discardableResult
            func signIn() async throws -> [UInt8] {
                let response = try await provider.signIn()
                guard case .object(let object) = try JSONValue.parse(response) else { throw HarnessError("bad token response") }
                try await sessions.save(tokenResponse: object, provider: try provider.provider(), for: key)
                return response
            }
        }

        @Test func fiftyConcurrentAutoLoginsFromThreeProcessesCauseExactlyOneRefresh() async throws {
            let world = try World()
            try await world.signIn()
            world.clock.advance(by: 3600)  // the access token has expired
            let goFile = world.cli.root + "/go"
            let script = CLIHarness.repository + "/Tests/Support/session-burst.py"
            var bursts: [(Subprocess, String)] = []
            for (index, calls) in [17, 17, 16].enumerated() {
                let output = world.cli.root + "/burst-\(index).out"
                let out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
                defer { close(out); close(null) }
                let child = try Subprocess.spawn(
                    [OAuthTestProvider.python, script, world.cli.socket, world.key.service, world.key.account, "\(calls)", goFile],
                    environment: ProcessInfo.processInfo.environment, stdin: null, stdout: out, stderr: out)
                bursts.append((child, output))
            }
            // Every process has its connections open before any call is sent.
            let deadline = Date().addingTimeInterval(30)
            while bursts.contains(where: { !((try? String(contentsOfFile: $0.1, encoding: .utf8)) ?? "").hasPrefix("READY") }) {
                #expect(Date() < deadline, "the burst processes did not get ready")
                if Date() >= deadline { return }
                usleep(10_000)
            }
            _ = FileManager.default.createFile(atPath: goFile, contents: Data())
            var outcomes: [String] = [], tokens: Set<String> = [], errors: [String] = []
            for (child, output) in bursts {
                #expect(child.wait() == 0)
                let text = try String(contentsOfFile: output, encoding: .utf8)
                let json = try #require(text.split(separator: "\n").last)
                guard case .array(let results) = try JSONValue.parse(Array(json.utf8)) else { Issue.record("bad output: \(text)"); return }
                for case .object(let result) in results {
                    if let error = result["error"]?.stringValue { errors.append(error) }
                    if let outcome = result["outcome"]?.stringValue { outcomes.append(outcome) }
                    if let token = result["token"]?.stringValue { tokens.insert(token) }
                }
            }
            #expect(errors.isEmpty, "errors: \(errors)")
            #expect(outcomes.count == 50)
            #expect(outcomes.allSatisfy { $0 == "refreshed" || $0 == "valid" }, "\(outcomes)")
            #expect(outcomes.contains("refreshed"))
            #expect(tokens.count == 1, "the callers got \(tokens.count) different tokens")
            #expect(try await world.provider.refreshRequests() == 1, "the provider saw more than one refresh")
            world.cli.stopDaemon()
        }

        /// The documented outcome of a crash between the provider's answer and the commit: the
        /// provider has rotated the refresh token, the vault still holds the old one, so the next
        /// AutoLogin gets invalid_grant and answers reauthRequired — never a hang, never a damaged store.
        @Test func aDaemonKilledBetweenTheProvidersAnswerAndTheCommitLeadsToSignInAgain() async throws {
            let world = try World()
            try await world.signIn()
            world.clock.advance(by: 3600)
            try await world.provider.control("/test/delay", ["seconds": 20])
            let null = open("/dev/null", O_RDWR | O_CLOEXEC)
            defer { close(null) }
            let caller = try Subprocess.spawn(
                [CLIHarness.executable, "session", "autologin", "--no-autostart", world.key.service, world.key.account],
                environment: world.cli.environment, stdin: null, stdout: null, stderr: null)
            // Wait until the provider has rotated the tokens (its answer is being held back)…
            let deadline = Date().addingTimeInterval(20)
            while try await world.provider.refreshResponses(200) == 0 {
                #expect(Date() < deadline, "the refresh never reached the provider")
                if Date() >= deadline { return }
                usleep(20_000)
            }
            // …then crash the daemon before it can commit.
            world.cli.killDaemon()
            let callerStatus = caller.wait()
            #expect(callerStatus == 4 || callerStatus == 7, "the waiting client exited with \(callerStatus)")
            try await world.provider.control("/test/delay", ["seconds": 0])

            let queue = try DatabaseQueue(path: world.cli.database)
            #expect(try await queue.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
            try queue.close()
            try world.startDaemon()
            let result = try await world.sessions.autoLogin(world.key)
            guard case .reauthRequired(.refreshRejected) = result else { Issue.record("expected reauthRequired, got \(result)"); return }
            await #expect(throws: VaultError(.notFound, "")) { try await world.sessions.status(world.key) }
            world.cli.stopDaemon()
        }

        @Test func theCLISavesFromStandardInputAndItsExitCodesTellTheOutcomes() async throws {
            let world = try World()
            let response = try await world.provider.signIn()
            let access = response.jsonField("access_token")!, refresh = response.jsonField("refresh_token")!
            // The client secret comes on descriptor 3, never on the command line.
            let saved = try world.cli.run(
                ["session", "save", world.key.service, world.key.account, "--token-endpoint", world.provider.tokenEndpoint.absoluteString,
                 "--revocation-endpoint", world.provider.revocationEndpoint.absoluteString, "--client-id", OAuthTestProvider.clientID,
                 "--client-secret-fd", "3"],
                input: Data(response), prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3<<EOF\n\(OAuthTestProvider.clientSecret)\nEOF"])
            #expect(saved.status == 0, "\(saved.stderr)")

            let valid = try world.cli.run(["session", "autologin", world.key.service, world.key.account])
            #expect(valid.status == 0 && valid.text == access)
            let status = try world.cli.run(["session", "status", "--json", world.key.service, world.key.account])
            #expect(try status.status == 0 && JSONValue.parse(Array(status.stdout)).objectValue?["state"]?.stringValue == "valid", "\(status.text)")
            for secret in [access, refresh, OAuthTestProvider.clientSecret] {
                #expect(!status.text.contains(secret) && !status.stderr.contains(secret), "status printed a secret")
                #expect(try !world.cli.daemonLogged(secret), "the daemon logged a secret")
            }

            world.clock.advance(by: 3600 - 30)
            world.provider.stop()
            let offline = try world.cli.run(["session", "autologin", world.key.service, world.key.account])
            #expect(offline.status == 9 && offline.text == access, "offline with a still-valid token prints it, exit 9")
            try world.provider.start()
            world.clock.advance(by: 301)
            let refreshed = try world.cli.run(["session", "autologin", world.key.service, world.key.account])
            #expect(refreshed.status == 0 && !refreshed.text.isEmpty && refreshed.text != access)

            let logout = try world.cli.run(["session", "logout", world.key.service, world.key.account])
            #expect(logout.status == 0 && logout.text.contains("revoked"))
            let gone = try world.cli.run(["session", "autologin", world.key.service, world.key.account])
            #expect(gone.status == 8 && gone.text.isEmpty && gone.stderr.contains("sign in again"))
            let bad = try world.cli.run(["session", "save", "a", "b", "--token-endpoint", "http://example.com/token", "--client-id", "x"],
                                        input: Data("{}".utf8))
            #expect(bad.status == 64 && bad.stderr.contains("https"))
            world.cli.stopDaemon()
        }

        @Test func watchersLearnOfRefreshesAndLogouts() async throws {
            let world = try World()
            try await world.signIn()
            var events = try await world.sessions.watch(service: world.key.service).makeAsyncIterator()
            #expect(try await world.sessions.refresh(world.key).outcome == "refreshed")
            _ = try await world.sessions.logout(world.key)
            #expect(try await events.next()?.kind == .refreshed)
            #expect(try await events.next()?.kind == .loggedOut)
            world.cli.stopDaemon()
        }

        /// The daemon's own work loop refreshes a login before it expires, with no client asking.
        @Test func theDaemonRefreshesALoginAheadOfItsExpiryByItself() async throws {
            let world = try World(proactive: true)
            try await world.signIn()
            // Due at expiry − min_valid (60 s) − proactive_refresh_seconds (60 s) − up to 30 s of jitter.
            world.clock.advance(by: 3600 - 120)
            #expect(try await world.provider.refreshRequests() == 0)
            // The loop sleeps until its deadline; a schedule change (a second login) wakes it at once.
            let other = try ItemKey(service: "com.sorted.other", account: "ada")
            guard case .object(let second) = try JSONValue.parse(try await world.provider.signIn()) else {
                Issue.record("the provider's sign-in answer is not a JSON object")
                return
            }
            try await world.sessions.save(tokenResponse: second, provider: try world.provider.provider(), for: other)
            let deadline = Date().addingTimeInterval(15)
            var status = try await world.sessions.status(world.key)
            while status.lastRefreshedAt == nil && Date() < deadline {
                usleep(20_000)
                status = try await world.sessions.status(world.key)
            }
            #expect(status.lastRefreshedAt != nil && status.state == "valid", "the daemon did not refresh the login ahead of time")
            #expect(try await world.provider.refreshRequests() == 1)
            let result = try await world.sessions.autoLogin(world.key)
            #expect(result.outcome == "valid", "AutoLogin after the proactive refresh should need no network")
            #expect(try await world.provider.refreshRequests() == 1)
            world.cli.stopDaemon()
        }

        @Test func loginsAreNotReachableThroughTheItemAPI() async throws {
            let world = try World()
            try await world.signIn()
            let vault = VaultClient(socketPath: world.cli.socket)
            #expect(try await vault.list().isEmpty, "List shows sortedvault's own records")
            for call in ["retrieve", "delete"] {
                let result = try world.cli.run([call, "sortedvault/session/com.sorted.api", "ada"])
                #expect(result.status == 64 && result.stderr.contains("reserved"), "\(call): \(result.stderr)")
            }
            #expect(try await world.sessions.status(world.key).state == "valid")
            world.cli.stopDaemon()
        }
    }
}
