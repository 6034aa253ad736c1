import Foundation
import SortedVault
import Testing
import TestSupport
import VaultTesting

extension DaemonSuite {
    /// `VaultLogin.signIn` over the socket against a real daemon and django-oauth-toolkit: what
    /// CancelLogin does when an app's sign-in ends without an answer, and an app's own redirect URI.
    @Suite struct AppSignInDaemonTests {
        static func settings(_ world: SignInWorld) -> ProviderSettings {
            ProviderSettings(kind: .oidc, clientID: "sorted-cli", issuer: world.provider.issuer)
        }

        @Test func anAppsSignInThatTimesOutIsCancelledInTheDaemonAndItsReceiverClosed() async throws {
            let world = try SignInWorld()
            try await world.fillSignIns(leaving: 1)
            let sleeper = ManualSleepClock()  // the app's clock; the daemon's stays real, so its sign-in is live when cancelled
            let login = try VaultLogin(service: world.service, account: "ada", in: world.sessions, sleeper: sleeper)
            let (shown, shownContinuation) = AsyncStream.makeStream(of: URL.self)
            let task = Task { try await login.signIn(provider: Self.settings(world), scopes: ["read"], timeout: 120,
                                                     opener: .loopback { shownContinuation.yield($0) }) }
            var url: URL?
            for await shownURL in shown { url = shownURL; break }
            let port = try #require(url.flatMap { SignInWorld.parameter("redirect_uri", of: $0) }.flatMap(URLComponents.init(string:))?.port)
            #expect(SignInWorld.listeners(on: port) == ["0100007F"], "the receiver listens on 127.0.0.1 only")
            try await sleeper.waitUntilSleeping(1, "the app's sign-in timeout to arm")
            sleeper.reach(Date(timeIntervalSince1970: 120))  // a ManualSleepClock starts at 1970
            let error = await #expect(throws: VaultError.self) { try await task.value }
            #expect(error?.code == .unavailable && error?.description.contains("within 120 s; the sign-in was cancelled") == true,
                    "\(String(describing: error))")
            #expect(SignInWorld.listeners(on: port).isEmpty, "the receiver is closed")
            try await world.expectCancelled()
            #expect(try await login.status() == nil)
        }

        /// The daemon's client refuses to start a call for a cancelled task, so the CancelLogin of a
        /// cancelled sign-in runs in a task of its own (`LoginService.endSignIn`).
        @Test func anAppsSignInWhoseTaskIsCancelledIsCancelledInTheDaemonAndItsReceiverClosed() async throws {
            let world = try SignInWorld()
            try await world.fillSignIns(leaving: 1)
            let login = try VaultLogin(service: world.service, account: "ada", in: world.sessions)
            let (shown, shownContinuation) = AsyncStream.makeStream(of: URL.self)
            let task = Task { try await login.signIn(provider: Self.settings(world), scopes: ["read"], opener: .loopback { shownContinuation.yield($0) }) }
            var url: URL?
            for await shownURL in shown { url = shownURL; break }
            let port = try #require(url.flatMap { SignInWorld.parameter("redirect_uri", of: $0) }.flatMap(URLComponents.init(string:))?.port)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(SignInWorld.listeners(on: port).isEmpty, "the receiver is closed")
            try await world.expectCancelled()
        }

        @Test func anAppsPrivateUseSchemeRedirectIsAcceptedAndASingleWordSchemeRefused() async throws {
            let world = try SignInWorld()
            let app = try #require(URL(string: "com.sorted.desktop:/oauth2redirect"))
            let start = try await world.sessions.beginSignIn(SignInRequest(service: world.service, account: "ada", settings: Self.settings(world),
                                                                           flow: .app, redirectURI: app, scopes: ["read"]))
            #expect(SignInWorld.parameter("redirect_uri", of: start.authorizationURL) == app.absoluteString)
            #expect(try await world.sessions.cancelSignIn(start.flowID))
            for refused in ["javascript:/cb", "com.sorted.desktop:/cb#x"] {
                let error = await #expect(throws: VaultError.self) {
                    _ = try await world.sessions.beginSignIn(SignInRequest(service: world.service, account: "ada", settings: Self.settings(world),
                                                                           flow: .app, redirectURI: URL(string: refused)!, scopes: ["read"]))
                }
                #expect(error?.code == .invalidArgument, "\(refused): \(String(describing: error))")
            }
            let asBrowser = await #expect(throws: VaultError.self) {
                _ = try await world.sessions.beginSignIn(SignInRequest(service: world.service, account: "ada", settings: Self.settings(world),
                                                                       flow: .browser, redirectURI: app, scopes: ["read"]))
            }
            #expect(asBrowser?.code == .invalidArgument, "a browser sign-in comes back to a listener or https, never an app scheme")
        }
    }
}

extension SignInWorld {
    /// The daemon keeps at most this many sign-ins of one program under way (`PendingSignIns.capacityPerProgram`).
    static let signInsPerUser = 8

    /// Begins placeholder sign-ins from the test process until `leaving` more fit under its
    /// program's cap, so that ``expectCancelled()`` can count what is still under way.
    func fillSignIns(leaving: Int) async throws {
        for _ in 0..<(Self.signInsPerUser - leaving) { _ = try await beginPlaceholder() }
    }

    /// Only the placeholders of ``fillSignIns(leaving:)`` (leaving 1) are still under way: the
    /// sign-in under test was cancelled in the daemon, not left waiting. CancelLogins ends and
    /// counts every sign-in of this user, whichever program began it.
    func expectCancelled(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let ended = try await sessions.cancelSignIns(service: service)
        #expect(ended == Self.signInsPerUser - 1, "\(ended) sign-ins were under way: the placeholders and, unless it was cancelled, the one under test",
                sourceLocation: sourceLocation)
    }

    private func beginPlaceholder() async throws -> SignInStart {
        try await sessions.beginSignIn(SignInRequest(service: service, account: "placeholder",
                                                     settings: ProviderSettings(kind: .oidc, clientID: "sorted-cli", issuer: provider.issuer),
                                                     flow: .browser, redirectURI: URL(string: "http://127.0.0.1:9/cb")!, scopes: ["read"]))
    }
}
