import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultCrypto
import VaultPolicy
import VaultSession
import Varlink

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// `sortedvault session login` end to end: the real CLI, the real daemon, django-oauth-toolkit
    /// with OpenID Connect (its real login and consent pages) and headless Chromium.
    @Suite struct SignInDaemonTests {
        @Test func aBrowserSignInIsStoredUnderTheVerifiedUserAndForgedCallbacksChangeNothing() async throws {
            let world = try SignInWorld()
            let login = try world.login(["--flow", "browser"])
            let url = try world.printedURL(login)
            let redirect = try #require(SignInWorld.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
            let port = try #require(redirect.port)
            let state = try #require(SignInWorld.parameter("state", of: url))
            #expect(redirect.host == "127.0.0.1" && redirect.path.count == 33, "an ephemeral port and a random path: \(redirect)")
            #expect(SignInWorld.parameter("code_challenge_method", of: url) == "S256")
            #expect(SignInWorld.parameter("nonce", of: url)?.count == 43)

            // Listening on 127.0.0.1 only, never on every interface.
            #expect(SignInWorld.listeners(on: port) == ["0100007F"])
            // What another uid can read of the waiting CLI: its command line and environment hold
            // none of the sign-in's secrets that exist by now (the state, the nonce, the PKCE
            // challenge, the receiver's path). They are fixed when the CLI starts, so the code and
            // the tokens, which come later, are checked where they could go: output and logs, below.
            let cmdline = try login.proc("cmdline"), environ = try login.proc("environ")
            #expect(cmdline.range(of: Data("login".utf8)) != nil, "the CLI's own command line was not read")
            let urlSecrets = [("state", state), ("nonce", SignInWorld.parameter("nonce", of: url) ?? "-"),
                              ("code_challenge", SignInWorld.parameter("code_challenge", of: url) ?? "-"), ("path", redirect.path)]
            for (name, secret) in urlSecrets {
                #expect(cmdline.range(of: Data(secret.utf8)) == nil && environ.range(of: Data(secret.utf8)) == nil,
                        "the sign-in's \(name) is on the CLI's command line or in its environment")
            }

            // Forged callbacks: another path, a wrong state. The wait goes on; nothing reaches the provider.
            let wrongPath = try LoopbackHTTP.get(port: port, "/callback?code=forged&state=\(state)")
            #expect(wrongPath.status == "HTTP/1.1 404 Not Found")
            let wrongState = try LoopbackHTTP.get(port: port, redirect.path + "?code=forged&state=not-\(state)")
            #expect(wrongState.status == "HTTP/1.1 400 Bad Request")
            for header in ["Cache-Control: no-store", "Referrer-Policy: no-referrer"] {
                #expect(wrongState.response.contains(header), "\(wrongState.response)")
            }
            #expect(!wrongState.response.contains("forged") && !wrongState.response.contains(state), "the page echoes nothing")
            #expect(try await world.provider.stats()["token_requests"]?.objectValue?["other"]?.intValue == 0)

            let page = try world.browse(url)
            #expect(page.body.contains("Signed in"), "\(page)")
            #expect(login.wait() == 0, "\(login.standardError)")
            #expect(login.standardOutput.contains("signed in: com.sorted.api \(world.provider.userSubject)"), "\(login.standardOutput)")
            #expect(SignInWorld.listeners(on: port).isEmpty, "the listener is closed after the flow")

            let status = try world.cli.run(["session", "status", world.service, world.provider.userSubject, "--json"])
            #expect(status.status == 0, "\(status.stderr)")
            let stored = try #require(try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])
            #expect(stored["state"] as? String == "valid" && stored["providerKind"] as? String == "oidc", "\(stored)")
            #expect(stored["hasIdToken"] as? Bool == true && stored["userId"] as? String == "1" && stored["clientId"] as? String == "sorted-cli")

            // No secret anywhere it could leak: the code, the access token.
            let code = try #require(URLComponents(string: page.finalURL)?.queryItems?.first { $0.name == "code" }?.value)
            let token = try world.cli.run(["session", "autologin", world.service, world.provider.userSubject]).text
            #expect(token.count > 10)
            let places: [(String, Data)] = [("stderr", Data(login.standardError.utf8)),
                                            ("stdout", Data(login.standardOutput.utf8)), ("daemon log", try world.cli.daemonLog()),
                                            ("access log", FileManager.default.contents(atPath: world.cli.accessLogPath) ?? Data())]
            for (name, bytes) in places {
                for secret in [code, token] { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) holds a secret") }
            }
            let accessLog = String(decoding: FileManager.default.contents(atPath: world.cli.accessLogPath) ?? Data(), as: UTF8.self)
            #expect(accessLog.contains("session.login"), "the access log records who began the sign-in:\n\(accessLog)")

            // The code replayed into a new sign-in of the same user: refused, the stored login unchanged.
            let before = try await world.sessions.status(try ItemKey(service: world.service, account: world.provider.userSubject))
            let again = try await world.sessions.beginSignIn(SignInRequest(
                service: world.service, account: nil, settings: .init(kind: .oidc, clientID: "sorted-cli", issuer: world.provider.issuer),
                flow: .browser, redirectURI: try #require(redirect.url), scopes: ["read"]))
            let newState = try #require(SignInWorld.parameter("state", of: again.authorizationURL))
            await #expect(throws: VaultError.self) {
                _ = try await world.sessions.completeSignIn(again.flowID, callbackQuery: SecureBytes(copying: Array("code=\(code)&state=\(newState)".utf8)))
            }
            let after = try await world.sessions.status(try ItemKey(service: world.service, account: world.provider.userSubject))
            #expect(after.signedInAt == before.signedInAt && after.issuedAt == before.issuedAt)
        }

        @Test(.enabled(if: CIRequirement.runs(where: LoopbackHTTP.hasIPv6Loopback), Comment(rawValue: LoopbackHTTP.ipv6Missing)))
        func aLocalhostRedirectIsAnsweredOnBoth127001AndIPv6Loopback() async throws {
            let world = try SignInWorld()
            try CIRequirement.require(LoopbackHTTP.hasIPv6Loopback, LoopbackHTTP.ipv6Missing)
            let port = try #require(LoopbackHTTP.portFreeOnBothLoopbacks(), "no port free on both 127.0.0.1 and ::1 in 1,000 tries")
            let login = try world.login(["--flow", "browser", "--redirect-uri", "http://localhost:\(port)/cb"])
            let url = try world.printedURL(login)
            #expect(SignInWorld.parameter("redirect_uri", of: url) == "http://localhost:\(port)/cb")
            let state = try #require(SignInWorld.parameter("state", of: url))
            _ = try login.waitForStandardError { $0.contains("Waiting for the browser") }
            #expect(SignInWorld.listeners(on: port).sorted() == ["0100007F", "v6:00000000000000000000000001000000"],
                    "127.0.0.1 and ::1, never a wildcard address")

            // A GET to [::1] reaches the flow: another state is checked by the daemon and ignored, and the wait goes on.
            let forged = try LoopbackHTTP.get(port: port, "/cb?code=forged&state=not-\(state)", ipv6: true)
            #expect(forged.status == "HTTP/1.1 400 Bad Request" && forged.response.contains("not for the sign-in under way"), "\(forged.response)")
            #expect(try LoopbackHTTP.get(port: port, "/elsewhere", ipv6: true).status == "HTTP/1.1 404 Not Found")

            let page = try world.browse(url)
            #expect(page.body.contains("Signed in"), "\(page)")
            #expect(login.wait() == 0, "\(login.standardError)")
            #expect(SignInWorld.listeners(on: port).isEmpty, "both are closed after the flow")
        }

        @Test func anIDTokenWithAnotherNonceIsRefusedAndNothingIsStored() async throws {
            let world = try SignInWorld()
            try await world.provider.control("/test/nonce", ["mode": "other"])
            let login = try world.login(["--flow", "browser"])
            let page = try world.browse(try world.printedURL(login))
            #expect(login.wait() == 8, "\(login.standardError)")
            #expect(login.standardError.contains("nonce"), "\(login.standardError)")
            #expect(!page.body.contains("Signed in"))
            #expect(try await world.sessions.list().isEmpty, "nothing was stored")
        }

        @Test func aDeclinedSignInEndsPlainlyWithExit8() async throws {
            let world = try SignInWorld()
            let login = try world.login(["--flow", "browser"])
            _ = try world.browse(try world.printedURL(login), deny: true)
            #expect(login.wait() == 8)
            #expect(login.standardError.contains("declined"), "\(login.standardError)")
            #expect(try await world.sessions.list().isEmpty)
        }

        @Test func noAnswerWithinTheTimeoutEndsTheSignInWithExit8AndClosesTheListener() async throws {
            let world = try SignInWorld()
            // The CLI's wait is on the real clock (a process of its own): the shortest timeout, one second.
            let login = try BackgroundCommand([CLIHarness.executable, "session", "login", world.service, "--flow", "browser"]
                                              + world.providerArguments + ["--timeout", "1", "--no-autostart"],
                                              environment: world.environment(), directory: world.cli.root)
            let port = try #require(SignInWorld.parameter("redirect_uri", of: try world.printedURL(login)).flatMap(URLComponents.init(string:))?.port)
            #expect(login.wait() == 8, "\(login.standardError)")
            #expect(login.standardError.contains("no answer came within 1 s; the sign-in was cancelled, nothing was stored"), "\(login.standardError)")
            #expect(SignInWorld.listeners(on: port).isEmpty)
            #expect(try await world.sessions.list().isEmpty)
        }

        @Test func thePasteFlowReadsTheAddressTheBrowserEndedOnFromStandardInput() async throws {
            let world = try SignInWorld()
            let login = try world.login(["--flow", "paste"])
            let url = try world.printedURL(login)
            #expect(SignInWorld.parameter("redirect_uri", of: url) == "http://127.0.0.1/sortedvault/paste")
            let page = try world.browse(url)  // nothing listens there: the address bar holds the answer
            #expect(page.finalURL.hasPrefix("http://127.0.0.1/sortedvault/paste?code="), "\(page.finalURL)")
            login.write("http://127.0.0.1/sortedvault/paste?code=forged&state=forged\n")
            _ = try login.waitForStandardError { $0.contains("not this sign-in's answer") }
            login.write(page.finalURL + "\n")
            #expect(login.wait() == 0, "\(login.standardError)")
            #expect(login.standardOutput.contains("signed in: com.sorted.api 1"))
            #expect(try world.cli.run(["session", "status", world.service, "1"]).text.contains("state: valid"))
        }

        /// `--flow paste` in a real terminal (a tmux pane): the URL is shown, the address the browser
        /// ended on is typed back; another sign-in's address is refused and the prompt comes again.
        @Test func thePasteFlowReadsTheAddressTypedIntoATerminal() async throws {
            let world = try SignInWorld()
            let terminal = try TmuxTerminal(
                [CLIHarness.executable, "session", "login", world.service, "--flow", "paste"] + world.providerArguments
                    + ["--scope", "read", "--timeout", "120", "--no-autostart"],
                environment: world.environment(), directory: world.cli.root)
            let screen = try terminal.waitForScreen { $0.contains("paste the address") }
            let line = try #require(screen.split(separator: "\n").first { $0.hasPrefix("  http") })
            let url = try #require(URL(string: line.trimmingCharacters(in: .whitespaces)))
            #expect(SignInWorld.parameter("redirect_uri", of: url) == "http://127.0.0.1/sortedvault/paste")
            let page = try world.browse(url)
            try terminal.type("http://127.0.0.1/sortedvault/paste?code=forged&state=forged")
            _ = try terminal.waitForScreen { $0.contains("not this sign-in's answer") }
            try terminal.type(page.finalURL)
            let exit = try terminal.exitStatus()
            let shown = try terminal.screen()
            #expect(exit == 0, "\(shown)")
            #expect(shown.contains("signed in: com.sorted.api \(world.provider.userSubject)"), "\(shown)")
            #expect(try world.cli.run(["session", "status", world.service, world.provider.userSubject]).text.contains("state: valid"))
        }

        @Test func withADisplayAndNoSSHTheDefaultFlowIsTheBrowser() throws {
            let world = try SignInWorld()
            // No --flow: auto. A PATH without xdg-open: nothing is started on this display-less host.
            try FileManager.default.createDirectory(atPath: world.cli.root + "/no-programs", withIntermediateDirectories: true)
            let login = try world.login([], environment: world.environment(["DISPLAY": ":0", "PATH": world.cli.root + "/no-programs"]))
            let url = try world.printedURL(login)
            #expect(SignInWorld.parameter("redirect_uri", of: url)?.hasPrefix("http://127.0.0.1:") == true, "\(url)")
            _ = try login.waitForStandardError { $0.contains("Waiting for the browser") }
            login.signal(SIGINT)
            #expect(login.wait() == 130, "\(login.standardError)")
        }

        @Test func withoutADisplayOverSSHAutoPicksTheDeviceFlowTheIssuerOffersAndPrintsTheCodeAndPage() async throws {
            let world = try SignInWorld()
            try await world.fillSignIns(leaving: 1)
            let login = try world.login(["--flow", "auto"],
                                        environment: world.environment(["SSH_CONNECTION": "192.0.2.7 50000 192.0.2.1 22", "DISPLAY": ":0"]))
            let (code, page) = try DeviceSignInDaemonTests.printedCode(login)
            #expect(page.absoluteString == world.provider.base + "/o/device/?user_code=" + code)
            login.signal(SIGINT)
            #expect(login.wait() == 130, "\(login.standardError)")
            #expect(login.standardError.contains("interrupted"))
            try await world.expectCancelled()
        }

        @Test func ctrlCWhileThePasteFlowWaitsForTheAddressCancelsTheDaemonsSignInAndExits130() async throws {
            let world = try SignInWorld()
            try await world.fillSignIns(leaving: 1)
            let login = try world.login(["--flow", "paste"])
            _ = try login.waitForStandardError { $0.contains("paste the address") }
            login.signal(SIGINT)
            #expect(login.wait() == 130, "\(login.standardError)")
            #expect(login.standardError.contains("interrupted; the sign-in was cancelled, nothing was stored"), "\(login.standardError)")
            try await world.expectCancelled()
        }

        @Test func withoutADisplayOverSSHAutoFallsBackToPasteWhenTheDeviceFlowIsOff() throws {
            let world = try SignInWorld(session: "device_flow = false\n")
            let login = try world.login(["--flow", "auto"],
                                        environment: world.environment(["SSH_CONNECTION": "192.0.2.7 50000 192.0.2.1 22", "DISPLAY": ":0"]))
            let url = try world.printedURL(login)
            #expect(url.absoluteString.hasPrefix(world.provider.issuer.absoluteString + "/authorize/?"))
            let text = try login.waitForStandardError { $0.contains("paste the address") }
            #expect(!text.contains("Waiting for the browser"))
            login.closeStandardInput()
            #expect(login.wait() == 8, "standard input ended: the sign-in is cancelled")
        }

        @Test func ctrlCClosesTheListenerCancelsTheDaemonsSignInAndExits130() async throws {
            let world = try SignInWorld()
            try await world.fillSignIns(leaving: 1)
            let login = try world.login(["--flow", "browser"])
            let url = try world.printedURL(login)
            let port = try #require(SignInWorld.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:))?.port)
            _ = try login.waitForStandardError { $0.contains("Waiting for the browser") }
            login.signal(SIGINT)
            #expect(login.wait() == 130, "\(login.standardError)")
            #expect(login.standardError.contains("interrupted"))
            #expect(SignInWorld.listeners(on: port).isEmpty)
            try await world.expectCancelled()
        }

        @Test func signingInNeedsTheSessionLoginOperation() throws {
            let everythingButLogin = Policy.knownOperations.filter { $0 != "session.login" }.map { "\"\($0)\"" }.joined(separator: ", ")
            let world = try SignInWorld(access: """
                [[rule]]
                name = "all-but-sign-in"
                effect = "allow"
                uids = ["@self"]
                operations = [\(everythingButLogin)]
                services = ["*"]
                """)
            let login = try world.login(["--flow", "paste"])
            #expect(login.wait() == 3, "\(login.standardError)")
            #expect(!login.standardError.contains("Open this URL"))
        }

        /// `--flow` is a closed set: any other value is a usage error that names the choices, before
        /// anything reaches the daemon; the completions offer the same set.
        @Test func aFlowNotOfTheSetIsAUsageErrorNamingTheChoices() throws {
            let (status, _, err) = try Subprocess.run([CLIHarness.executable, "session", "login", "com.sorted.api", "--flow", "app",
                                                       "--kind", "oauth2", "--client-id", "x", "--token-endpoint", "http://127.0.0.1:9/t"],
                                                      environment: ["COLUMNS": "80"], input: Data())
            let text = String(decoding: err, as: UTF8.self)
            #expect(status == 64, "\(status): \(text)")
            for choice in ["auto", "browser", "paste", "device", "password"] { #expect(text.contains("'\(choice)'"), "\(text)") }
            let bash = try HelpTextTests.help(["--generate-completion-script", "bash"])
            let offered = try #require(bash.range(of: "'--flow')").map { bash[$0.upperBound...].prefix(200) }, "no completion for --flow")
            for choice in ["auto", "browser", "paste", "device", "password"] { #expect(offered.contains("'\(choice)'"), "\(offered)") }
        }

        @Test func loginShowsItsOptionsInHelpManualAndCompletion() throws {
            let options = ["--flow", "--timeout", "--port", "--redirect-uri", "--scope", "--authorization-endpoint", "--issuer"]
            let help = try HelpTextTests.help(["session", "login", "--help"])
            for option in options { #expect(help.contains(option), "\(option) missing in\n\(help)") }
            let dump = try ManualPageTests.dumpedHelp(CLIHarness.executable)
            let session = try #require((dump["subcommands"] as? [[String: Any]])?.first { $0["commandName"] as? String == "session" })
            #expect(ManualPageTests.subcommands(session).contains("login"))
            let bash = try HelpTextTests.help(["--generate-completion-script", "bash"])
            #expect(bash.contains("--redirect-uri") && bash.contains("--authorization-endpoint"))
        }
    }
}
