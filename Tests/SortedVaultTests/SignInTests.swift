import Foundation
import Synchronization
import Testing
import SortedVault
import TestSupport
import VaultTesting

/// `VaultLogin.signIn` over an in-process `SessionManager` (a scripted token endpoint, a manual
/// clock): a custom opener, the loopback receiver (a real socket on 127.0.0.1, the test as the
/// browser), a forged answer, and cancellation of the calling task.
@Suite(.timeLimit(.minutes(20))) struct SignInTests {
    static let provider = ProviderSettings(kind: .oauth2, tokenEndpoint: URL(string: "https://auth.example.test/oauth/token")!,
                                           clientID: "sorted-desktop", authorizationEndpoint: URL(string: "https://auth.example.test/authorize")!)
    static let registered = URL(string: "https://app.example.test/signed-in")!

    /// A login over a manager whose sign-ins are seen through ``RecordingService``.
    struct Rig {
        /// Drives the sign-in's timeout: moving ``clock`` moves it.
        let sleeper = ManualSleepClock()
        let clock: ManualClock
        let transport = ScriptedOAuthTransport([.tokens(access: "A1", refresh: "R1")])
        let manager: SessionManager
        let recorder: RecordingService
        let login: VaultLogin

        init() throws {
            clock = ManualClock(mirror: sleeper.reach)
            manager = try SessionManager(store: InMemoryTokenStore(clock: clock), transport: transport, clock: clock,
                                         configuration: .init(proactiveRefresh: false), random: { 0.5 })
            recorder = RecordingService(manager)
            login = try VaultLogin(service: "com.sorted.api", account: "ada", in: recorder, clock: clock, sleeper: sleeper)
        }
    }

    /// Starts a loopback sign-in with a 120 s timeout and waits for the address it shows the user.
    static func signInShowingItsAddress(_ rig: Rig) async throws -> (task: Task<SessionStatus, any Error>, url: URL, redirect: URLComponents) {
        let (shown, shownContinuation) = AsyncStream.makeStream(of: URL.self)
        let task = Task { try await rig.login.signIn(provider: Self.provider, timeout: 120, opener: .loopback { shownContinuation.yield($0) }) }
        var url: URL?
        for await shownURL in shown { url = shownURL; break }
        let shownURL = try #require(url)
        let redirect = try #require(Self.parameter("redirect_uri", of: shownURL).flatMap(URLComponents.init(string:)))
        return (task, shownURL, redirect)
    }

    static func parameter(_ name: String, of url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    @Test func aCustomOpenersCallbackCompletesTheSignInAndStoresTheLogin() async throws {
        let rig = try Rig()
        let seen = Mutex<(URL, URL)?>(nil)
        let status = try await rig.login.signIn(provider: Self.provider, scopes: ["read"], opener: .custom(redirectURI: Self.registered) { url, redirect in
            seen.withLock { $0 = (url, redirect) }
            let state = try #require(Self.parameter("state", of: url))
            return URL(string: redirect.absoluteString + "?code=the-code&state=" + state)!
        })
        let (url, redirect) = try #require(seen.withLock { $0 })
        #expect(redirect == Self.registered)
        #expect(url.absoluteString.hasPrefix("https://auth.example.test/authorize?"))
        #expect(Self.parameter("redirect_uri", of: url) == Self.registered.absoluteString)
        #expect(Self.parameter("code_challenge_method", of: url) == "S256")
        let exchange = try #require(rig.transport.requests.first)
        #expect(exchange["code"] == "the-code" && exchange["redirect_uri"] == Self.registered.absoluteString)
        #expect(status.state == "valid")
        #expect(try await rig.login.status()?.hasRefreshToken == true)
        #expect(try await rig.login.accessToken() == "A1")
    }

    @Test func aCustomOpenerCompletesWithTheAppsPrivateUseSchemeRedirect() async throws {
        let rig = try Rig()
        let registered = URL(string: "com.example.app:/oauth2redirect")!
        let status = try await rig.login.signIn(provider: Self.provider, opener: .custom(redirectURI: registered) { url, redirect in
            #expect(Self.parameter("redirect_uri", of: url) == registered.absoluteString)
            let state = try #require(Self.parameter("state", of: url))
            return URL(string: redirect.absoluteString + "?code=the-code&state=" + state)!
        })
        #expect(status.state == "valid")
        #expect(rig.transport.requests.first?["redirect_uri"] == registered.absoluteString, "the exchange names the same URI")
        #expect(try await rig.login.accessToken() == "A1")
    }

    @Test func aCustomOpenerWithASingleWordSchemeIsRefusedBeforeAnythingOpens() async throws {
        let rig = try Rig()
        let opened = Mutex(false)
        let error = await thrown {
            try await rig.login.signIn(provider: Self.provider, opener: .custom(redirectURI: URL(string: "javascript:/cb")!) { _, redirect in
                opened.withLock { $0 = true }
                return redirect
            })
        }
        #expect((error as? VaultError)?.code == .invalidArgument, "\(String(describing: error))")
        #expect(opened.withLock { $0 } == false && rig.recorder.begun.isEmpty)
    }

    @Test func theTimeoutCancelsTheVaultsSignInClosesTheReceiverAndSaysNothingWasStored() async throws {
        let rig = try Rig()
        let (task, url, redirect) = try await Self.signInShowingItsAddress(rig)
        let state = try #require(Self.parameter("state", of: url))
        try await rig.sleeper.waitUntilSleeping(1, "the sign-in timeout to sleep on the manual clock")
        // Only the app's clock moves: the vault's sign-in stays live by its own clock, so whatever
        // ends it below is the app's CancelSignIn, not its expiry.
        rig.sleeper.reach(rig.clock.now.addingTimeInterval(119))
        #expect(rig.sleeper.sleeping == 1, "a second before the timeout the wait goes on")
        rig.sleeper.reach(rig.clock.now.addingTimeInterval(120))
        let error = await thrown { _ = try await task.value }
        let vaultError = try #require(error as? VaultError, "\(String(describing: error))")
        #expect(vaultError.code == .unavailable)
        #expect(vaultError.description.contains("no answer came from the browser within 120 s; the sign-in was cancelled, nothing was stored"))
        #expect(rig.recorder.cancelled == [true], "CancelSignIn reached the vault while the sign-in was live")
        let flow = try #require(rig.recorder.begun.first)
        let late = await thrown { _ = try await rig.manager.completeSignIn(flow, callbackQuery: SecureBytes(copying: Array("code=c&state=\(state)".utf8))) }
        #expect((late as? VaultError)?.code == .invalidArgument, "the vault's sign-in is gone")
        #expect(rig.transport.requestCount == 0)
        #expect(try await rig.login.status() == nil)
        await #expect(throws: (any Error).self, "the receiver is closed") { _ = try await Self.get(port: redirect.port!, redirect.path) }
    }

    @Test func aCustomOpenersAnswerWithAnotherStateIsRefusedAndTheSignInIsCancelled() async throws {
        let rig = try Rig()
        let state = Mutex<String?>(nil)
        let error = await thrown {
            try await rig.login.signIn(provider: Self.provider, opener: .custom(redirectURI: Self.registered) { url, redirect in
                state.withLock { $0 = Self.parameter("state", of: url) }
                return URL(string: redirect.absoluteString + "?code=the-code&state=forged")!
            })
        }
        #expect((error as? VaultError)?.code == .callbackMismatch, "\(String(describing: error))")
        #expect(rig.recorder.cancelled == [true], "the vault's sign-in was live and is cancelled")
        #expect(rig.transport.requestCount == 0, "nothing reached the token endpoint")
        #expect(try await rig.login.status() == nil)
        // The real answer comes too late: the sign-in is gone.
        let flow = try #require(rig.recorder.begun.first)
        let real = try #require(state.withLock { $0 })
        let late = await thrown { _ = try await rig.manager.completeSignIn(flow, callbackQuery: SecureBytes(copying: Array("code=c&state=\(real)".utf8))) }
        #expect((late as? VaultError)?.code == .invalidArgument)
    }

    @Test func cancellingTheTaskWhileTheOpenerWaitsCancelsTheVaultsSignIn() async throws {
        let rig = try Rig()
        let (opened, openedContinuation) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            try await rig.login.signIn(provider: Self.provider, opener: .custom(redirectURI: Self.registered) { _, _ in
                openedContinuation.yield()
                try await Task.sleep(for: .seconds(3600))  // a web view the user never finishes; the cancellation ends it
                return Self.registered
            })
        }
        for await _ in opened { break }
        task.cancel()
        let error = await thrown { _ = try await task.value }
        #expect(error is CancellationError, "\(String(describing: error))")
        #expect(rig.recorder.cancelled == [true])
        #expect(try await rig.login.status() == nil)
    }

    @Test func theLoopbackReceiverAnswersOnlyItsPathIgnoresAnotherStateAndClosesAfter() async throws {
        let rig = try Rig()
        let shown = Mutex<URL?>(nil)
        let browser = Mutex<Task<[Int], any Error>?>(nil)
        let status = try await rig.login.signIn(provider: Self.provider, timeout: 120, opener: .loopback { url in
            shown.withLock { $0 = url }
            browser.withLock { $0 = Task {
                let redirect = try #require(Self.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
                let state = try #require(Self.parameter("state", of: url))
                var statuses: [Int] = []
                for target in ["/elsewhere?code=forged&state=\(state)", redirect.path + "?code=forged&state=not-\(state)",
                               redirect.path + "?code=the-code&state=\(state)"] {
                    statuses.append(try await Self.get(port: try #require(redirect.port), target))
                }
                return statuses
            } }
        })
        #expect(status.state == "valid")
        let statuses = try await #require(browser.withLock { $0 }).value
        #expect(statuses == [404, 400, 200])
        let url = try #require(shown.withLock { $0 })
        let redirect = try #require(Self.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
        #expect(redirect.scheme == "http" && redirect.host == "127.0.0.1" && redirect.path.count == 33, "\(redirect)")
        #expect(rig.transport.requestCount == 1 && rig.transport.requests.first?["code"] == "the-code", "the forged code went nowhere")
        await #expect(throws: (any Error).self, "the receiver is closed") { _ = try await Self.get(port: redirect.port!, redirect.path) }
    }

    @Test(.enabled(if: CIRequirement.runs(where: LoopbackHTTP.hasIPv6Loopback), Comment(rawValue: LoopbackHTTP.ipv6Missing)))
    func aLocalhostReceiverIsReachedOverIPv6Loopback() async throws {
        try CIRequirement.require(LoopbackHTTP.hasIPv6Loopback, LoopbackHTTP.ipv6Missing)
        let rig = try Rig()
        let reached = Mutex<Task<Int, any Error>?>(nil)
        let status = try await rig.login.signIn(provider: Self.provider, timeout: 120, opener: .loopback(localhost: true) { url in
            reached.withLock { $0 = Task {
                let redirect = try #require(Self.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
                try #require(redirect.host == "localhost", "\(redirect)")
                let state = try #require(Self.parameter("state", of: url))
                return try await Self.get(port: try #require(redirect.port), redirect.path + "?code=the-code&state=\(state)", ipv6: true)
            } }
        })
        #expect(status.state == "valid")
        #expect(try await #require(reached.withLock { $0 }).value == 200)
    }

    @Test func cancellingTheTaskWhileTheReceiverWaitsClosesItAndCancelsTheVaultsSignIn() async throws {
        let rig = try Rig()
        let (task, _, redirect) = try await Self.signInShowingItsAddress(rig)
        task.cancel()
        let error = await thrown { _ = try await task.value }
        #expect(error is CancellationError, "\(String(describing: error))")
        #expect(rig.recorder.cancelled == [true])
        await #expect(throws: (any Error).self, "the receiver is closed") { _ = try await Self.get(port: redirect.port!, redirect.path) }
    }

    /// A GET to 127.0.0.1:`port` (`ipv6`: [::1]), on a thread of its own (it blocks); the answer's HTTP status.
    static func get(port: Int, _ target: String, ipv6: Bool = false) async throws -> Int {
        let answer = try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try LoopbackHTTP.get(port: port, target, ipv6: ipv6) }) }.start()
        }
        return Int(answer.status.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// The manager's login API, recording the sign-ins begun and what each cancellation found.
final class RecordingService: LoginService {
    let manager: SessionManager
    private let record = Mutex<(begun: [String], cancelled: [Bool])>(([], []))
    var begun: [String] { record.withLock { $0.begun } }
    var cancelled: [Bool] { record.withLock { $0.cancelled } }

    init(_ manager: SessionManager) { self.manager = manager }

    func beginSignIn(_ request: SignInRequest) async throws -> SignInStart {
        let start = try await manager.beginSignIn(request)
        record.withLock { $0.begun.append(start.flowID) }
        return start
    }

    func completeSignIn(_ flowID: String, callbackQuery: SecureBytes) async throws -> SignInResult {
        try await manager.completeSignIn(flowID, callbackQuery: callbackQuery)
    }

    func cancelSignIn(_ flowID: String) async throws -> Bool {
        let cancelled = try await manager.cancelSignIn(flowID)
        record.withLock { $0.cancelled.append(cancelled) }
        return cancelled
    }

    func save(tokenResponseJSON json: SecureBytes, provider: ProviderSettings, for key: ItemKey, maximumLifetime: Int?) async throws -> SessionStatus {
        try await manager.save(tokenResponseJSON: json, provider: provider, for: key, maximumLifetime: maximumLifetime)
    }
    func autoLogin(_ key: ItemKey) async throws -> AutoLoginResult { try await manager.autoLogin(key) }
    func refresh(_ key: ItemKey) async throws -> AutoLoginResult { try await manager.refresh(key) }
    func logout(_ key: ItemKey) async throws -> LogoutResult { try await manager.logout(key) }
    func status(_ key: ItemKey) async throws -> SessionStatus { try await manager.status(key) }
    func list(service: String?) async throws -> [SessionListEntry] { try await manager.list(service: service) }
    func watch(service: String?, account: String?) async throws -> AsyncThrowingStream<SessionEvent, any Error> {
        try await manager.watch(service: service, account: account)
    }
}
