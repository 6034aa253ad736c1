import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// `session login --flow browser` against another local user and a same-uid process (issue 34,
    /// points 2 and 5): the real CLI and daemon, django-oauth-toolkit, headless Chromium, and the
    /// real `xdg-open` starting a browser script that writes down what it was given.
    @Suite struct SignInHijackDaemonTests {
        /// What the URL gives away: state, PKCE challenge, nonce and the receiver's path.
        static func secrets(of url: URL) throws -> [String: String] {
            let redirect = try #require(SignInWorld.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
            var found = ["receiver path": redirect.path]
            for name in ["state", "code_challenge", "nonce"] { found[name] = try #require(SignInWorld.parameter(name, of: url)) }
            return found
        }

        /// A browser that writes down its argument and the command lines of itself, `xdg-open` (its
        /// caller, still running) and the CLI, then exits.
        static func recordingBrowser(_ world: SignInWorld) throws -> (script: String, record: String) {
            let record = world.cli.root + "/opened"
            let script = world.cli.root + "/browser.sh"
            try """
                #!/bin/sh
                printf '%s' "$1" > '\(record).arg'
                p=$$; : > '\(record).cmdlines'
                for i in 1 2 3 4; do
                  [ -r /proc/$p/cmdline ] || break
                  tr '\\0' ' ' < /proc/$p/cmdline >> '\(record).cmdlines'; echo >> '\(record).cmdlines'
                  p=$(awk '{print $4}' /proc/$p/stat)
                done
                mv '\(record).arg' '\(record)'

                """.write(toFile: script, atomically: true, encoding: .utf8)
            chmod(script, 0o755)
            return (script, record)
        }

        @Test func theBrowserIsStartedWithAPrivatePageNotTheURLAndForgeriesDoNotEndTheWait() async throws {
            let world = try SignInWorld()
            let (browser, record) = try Self.recordingBrowser(world)
            let login = try world.login(["--flow", "browser"], environment: world.environment(["BROWSER": browser]))
            let url = try world.printedURL(login)
            let secrets = try Self.secrets(of: url)
            let hangGuard = ContinuousClock.now + .seconds(600)
            while !FileManager.default.fileExists(atPath: record) && ContinuousClock.now < hangGuard { try await Task.sleep(for: .milliseconds(20)) }
            let argument = try String(contentsOfFile: record, encoding: .utf8)
            let cmdlines = try String(contentsOfFile: record + ".cmdlines", encoding: .utf8)
            #expect(cmdlines.contains("xdg-open"), "the real opener's command line, read while it ran:\n\(cmdlines)")
            for (name, secret) in secrets {
                #expect(!argument.contains(secret) && !cmdlines.contains(secret), "the \(name) is on a command line:\n\(argument)\n\(cmdlines)")
            }

            // The browser's argument is a page only this user can read, in the runtime directory, leading to the URL.
            let page = try #require(URL(string: argument), "\(argument)")
            #expect(page.isFileURL && page.path.hasPrefix(world.cli.runtimeDir + "/"), "\(argument)")
            var status = stat()
            #expect(lstat(page.path, &status) == 0 && status.st_mode & 0o777 == 0o600 && status.st_uid == getuid(), "mode \(String(status.st_mode & 0o777, radix: 8))")
            let html = try String(contentsOfFile: page.path, encoding: .utf8)
            #expect(html.contains(url.absoluteString.replacingOccurrences(of: "&", with: "&amp;")), "the page leads to the URL")

            // Requests at the receiver's path without this sign-in's state: answered 400, the wait goes on.
            let redirect = try #require(SignInWorld.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
            let port = try #require(redirect.port)
            let state = try #require(secrets["state"])
            for query in ["", "?code=forged", "?error=access_denied", "?code=a&code=b&state=\(state)", "?state=%zz", "?code=forged&state=not-\(state)"] {
                let answer = try LoopbackHTTP.get(port: port, redirect.path + query)
                #expect(answer.status == "HTTP/1.1 400 Bad Request", "\(query): \(answer.status)")
            }

            // The browser opens the page; it leads on to the provider, and the sign-in completes.
            let done = try world.browse(page)
            #expect(done.body.contains("Signed in"), "\(done)")
            #expect(login.wait() == 0, "\(login.standardError)")
            #expect(login.standardOutput.contains("signed in: com.sorted.api \(world.provider.userSubject)"), "\(login.standardOutput)")
            #expect(!FileManager.default.fileExists(atPath: page.path), "the page is removed when the sign-in ends")
        }

        @Test func aSlowClientDoesNotStretchTheTimeout() async throws {
            let world = try SignInWorld()
            let started = ContinuousClock.now
            let login = try BackgroundCommand([CLIHarness.executable, "session", "login", world.service, "--flow", "browser"]
                                              + world.providerArguments + ["--timeout", "4", "--no-autostart"],
                                              environment: world.environment(), directory: world.cli.root)
            let redirect = try #require(SignInWorld.parameter("redirect_uri", of: try world.printedURL(login)).flatMap(URLComponents.init(string:)))
            let slow = try SlowLorisClient(port: try #require(redirect.port), start: "GET \(redirect.path)?code=")
            defer { slow.stop() }
            #expect(login.wait() == 8, "\(login.standardError)")
            let took = ContinuousClock.now - started
            #expect(login.standardError.contains("no answer came within 4 s"), "\(login.standardError)")
            // Generous for a loaded machine; the old receiver waited for the slow client's request
            // (one byte a second, up to 8 KiB) before it looked at the clock again.
            #expect(took < .seconds(60), "--timeout 4 ended after \(took)")
            #expect(try await world.sessions.list().isEmpty)
        }

        /// A same-uid program the policy confines to `com.a.*` fills its own share of sign-ins; the
        /// user's CLI still signs in, and ends the program's sign-ins with `session cancel-logins`.
        @Test func aConfinedProgramFillingItsOwnCapDoesNotBlockTheUsersSignInAndTheUserCancelsThem() async throws {
            let app = SessionNameConfusionTests.testExecutable
            let world = try SignInWorld(access: """
                [[rule]]
                name = "confined-app"
                effect = "allow"
                uids = ["@self"]
                executables = ["\(app)"]
                operations = ["session.login"]
                services = ["com.a.*"]

                [[rule]]
                name = "the-user"
                effect = "allow"
                uids = ["@self"]
                executables = ["\(CLIHarness.executable)", "\(CLIHarness.executable)-cli"]
                operations = ["*"]
                services = ["*"]
                """)
            func begin() async throws -> SignInStart {
                try await world.sessions.beginSignIn(SignInRequest(
                    service: "com.a.app", account: "placeholder", settings: ProviderSettings(kind: .oidc, clientID: "sorted-cli", issuer: world.provider.issuer),
                    flow: .browser, redirectURI: URL(string: "http://127.0.0.1:9/cb")!, scopes: ["read"]))
            }
            for _ in 0..<SignInWorld.signInsPerUser { _ = try await begin() }
            let full = await #expect(throws: VaultError.self, "the program's own cap is full") { _ = try await begin() }
            #expect(full?.description.contains("this program has 8 sign-ins under way") == true, "\(String(describing: full))")

            // The user's sign-in begins (the URL is printed), then ends when standard input does.
            let login = try world.login(["--flow", "paste"])
            _ = try world.printedURL(login)
            login.closeStandardInput()
            #expect(login.wait() == 8, "\(login.standardError)")

            // The user ends the program's sign-ins; the program has room again.
            let cancel = try world.cli.run(["session", "cancel-logins", "--no-autostart"])
            #expect(cancel.status == 0 && cancel.text.contains("cancelled 8 sign-ins under way"), "\(cancel.text) \(cancel.stderr)")
            _ = try await begin()
            // The confined program may end its own (of the services it may sign in to), not others'.
            await #expect(throws: VaultError.self, "a service outside com.a.*") { _ = try await world.sessions.cancelSignIns(service: "com.sorted.api") }
            #expect(try await world.sessions.cancelSignIns(service: "com.a.app") == 1)
        }
    }
}
