import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore

extension DaemonSuite {
    /// `Examples/LoginExample`, the app docs/swift.md points at: built as its own SwiftPM package (it
    /// depends on this repository by path) and run against a real daemon and the real OAuth2
    /// provider, whose `/api/me` is the protected endpoint it calls.
    @Suite struct LoginExampleTests {
        /// The example's build directory, kept between runs so that only the first build compiles
        /// its dependencies; apart from `.build`, so the nested build never waits on the lock of
        /// the `swift test` that runs it. `scripts/test` builds it before the tests, so that here it
        /// is a build with nothing to do.
        static let scratch = CLIHarness.repository + "/.build-examples"

        /// Built once for the suite's tests, which run in parallel: two SwiftPM builds of one scratch
        /// directory at once race each other (one was seen to compile without a newly added file).
        static let built = Result { try build() }

        static func buildExample() throws -> String { try built.get() }

        private static func build() throws -> String {
            let started = ContinuousClock.now
            let (status, out, err) = try Subprocess.run(
                ["/usr/bin/env", "swift", "build", "--package-path", CLIHarness.repository + "/Examples/LoginExample",
                 "--scratch-path", scratch],
                environment: ProcessInfo.processInfo.environment, input: Data(), timeout: .seconds(1500))
            let output = String(decoding: out + err, as: UTF8.self)
            guard status == 0 else { throw HarnessError("the example did not build:\n\(output.suffix(4000))") }
            print("LoginExample built in \(ContinuousClock.now - started)")
            return scratch + "/debug/login-example"
        }

        @Test func theExampleCallsTheProtectedEndpointSurvivesARestartRefreshesSilentlyAndLogsOut() async throws {
            let example = try Self.buildExample()
            let world = try SessionDaemonTests.World()
            defer { world.cli.stopDaemon() }
            let login = [example, "--service", world.key.service, "--account", world.key.account]
            func run(_ arguments: String...) throws -> (status: Int32, text: String, stderr: String) {
                let (status, out, err) = try Subprocess.run(login + arguments, environment: world.cli.environment, input: Data())
                return (status, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
            }
            let me = world.provider.base + "/api/me"

            let before = try run("status")
            #expect(before.status == 8 && before.stderr.contains("not signed in"), "\(before.stderr)")

            // Signed in today through `sortedvault session save` (the client secret on a descriptor).
            let answer = try await world.provider.signIn()
            let saved = try world.cli.run(
                ["session", "save", world.key.service, world.key.account, "--token-endpoint", world.provider.tokenEndpoint.absoluteString,
                 "--revocation-endpoint", world.provider.revocationEndpoint.absoluteString,
                 "--client-id", OAuthTestProvider.clientID, "--client-secret-fd", "3"],
                input: Data(answer), prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3<<EOF\n\(OAuthTestProvider.clientSecret)\nEOF"])
            #expect(saved.status == 0, "\(saved.stderr)")

            let status = try run("status")
            #expect(status.status == 0 && status.text.contains("valid"), "\(status.text) \(status.stderr)")
            let call = try run("call", me)
            #expect(call.status == 0 && call.text.contains("\"ada\""), "\(call.text) \(call.stderr)")

            // A restart of the daemon: the login is still there, no sign-in.
            world.cli.stopDaemon()
            try world.startDaemon()
            #expect(try run("call", me).status == 0)
            #expect(try await world.provider.passwordRequests() == 1)
            #expect(try await world.provider.refreshRequests() == 0)

            // Past the access token's hour (the provider's --access-token-seconds): refreshed on the call.
            world.clock.advance(by: 3600)
            let refreshed = try run("call", me)
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(try await world.provider.refreshRequests() == 1)
            #expect(try await world.provider.stats()["api_requests"]?.intValue == 3)

            let logout = try run("logout")
            #expect(logout.status == 0 && logout.text.contains("logged out") && logout.text.contains("revoked"), "\(logout.text)")
            #expect(try await world.provider.revocationRequests() >= 1)
            let after = try run("call", me)
            #expect(after.status == 8 && after.stderr.contains("sign in again"), "\(after.stderr)")
        }

        @Test func theExampleSignsInThroughTheVaultWithTheBrowserThenCallsTheProtectedEndpoint() async throws {
            let example = try Self.buildExample()
            let world = try SignInWorld()
            let identity = ["--service", world.service, "--account", "ada"]
            let signIn = try BackgroundCommand(
                [example] + identity + ["signin", "--issuer", world.provider.issuer.absoluteString, "--client-id", "sorted-cli", "--scope", "read"],
                environment: world.environment(), directory: world.cli.root)
            let url = try world.printedURL(signIn)
            let redirect = try #require(SignInWorld.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
            #expect(redirect.host == "127.0.0.1" && redirect.path.count == 33, "the shared loopback receiver: \(redirect)")
            #expect(SignInWorld.listeners(on: try #require(redirect.port)) == ["0100007F"])

            let page = try world.browse(url)  // ada signs in on the provider's real pages; Chromium lands on the receiver
            #expect(page.body.contains("Signed in"), "\(page)")
            #expect(signIn.wait() == 0, "\(signIn.standardError)")
            #expect(signIn.standardOutput.contains("signed in as ada (user \(world.provider.userSubject))"), "\(signIn.standardOutput)")
            #expect(SignInWorld.listeners(on: redirect.port!).isEmpty, "the receiver is closed after the sign-in")
            let code = try #require(URLComponents(string: page.finalURL)?.queryItems?.first { $0.name == "code" }?.value)
            #expect(!signIn.standardError.contains(code) && !signIn.standardOutput.contains(code))

            let (status, out, err) = try Subprocess.run([example] + identity + ["call", world.provider.base + "/api/me"],
                                                        environment: world.environment(), input: Data())
            #expect(status == 0 && String(decoding: out, as: UTF8.self).contains("\"ada\""), "\(String(decoding: out + err, as: UTF8.self))")
            let stored = try await world.sessions.status(try ItemKey(service: world.service, account: "ada"))
            #expect(stored.providerKind == "oidc" && stored.hasIDToken, "the id token was verified, nonce included, and kept")
        }
    }
}
