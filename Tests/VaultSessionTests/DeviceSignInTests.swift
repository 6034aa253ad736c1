import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// Device sign-ins (RFC 8628) against a scripted provider, on a manual clock: the poll times are
/// the provider's own record of when each poll arrived, on the clock the test moves.
@Suite(.timeLimit(.minutes(20))) struct DeviceSignInTests {
    static let deviceEndpoint = URL(string: "https://auth.example.test/oauth/device")!
    static let owner: UInt32 = 1000
    static let key = try! ItemKey(service: "com.sorted.app", account: "ada")
    static let authorization = #"{"device_code":"DC-secret","user_code":"WDJB-MJHT","verification_uri":"https://auth.example.test/device","verification_uri_complete":"https://auth.example.test/device?user_code=WDJB-MJHT","expires_in":600,"interval":5}"#

    /// A manager whose provider answers the device endpoint with `authorization` and each poll
    /// with the next of `polls` (authorization_pending once they run out), recording when it came.
    struct Rig {
        let clock: ManualClock
        let sleeper: ManualSleepClock
        let transport: ScriptedOAuthTransport
        let sessions: SessionManager
        let memory: InMemoryTokenStore
        let pollTimes: Locked<[Date]>

        init(polls: [ScriptedOAuthTransport.Reply], deviceFlow: Bool = true, authorization: String = DeviceSignInTests.authorization) throws {
            let sleeper = ManualSleepClock()
            let clock = ManualClock(mirror: sleeper.reach)
            let pollTimes = Locked<[Date]>([])
            let script = Locked(polls)
            transport = ScriptedOAuthTransport { request in
                if request.url == DeviceSignInTests.deviceEndpoint { return .answer(status: 200, body: authorization) }
                pollTimes.withLock { $0.append(clock.now) }
                return script.withLock { $0.isEmpty ? .oauthError("authorization_pending") : $0.removeFirst() }
            }
            memory = InMemoryTokenStore(clock: clock)
            sessions = try SessionManager(store: memory, transport: transport, clock: clock,
                                          configuration: .init(deviceFlow: deviceFlow), random: { 0.5 }, sleeper: sleeper)
            self.clock = clock
            self.sleeper = sleeper
            self.pollTimes = pollTimes
        }

        func begin(lifetime: TimeInterval = 300) async throws -> SignInStart {
            let settings = ProviderSettings(kind: .oauth2, tokenEndpoint: tokenEndpoint, clientID: "sorted-cli",
                                            deviceAuthorizationEndpoint: DeviceSignInTests.deviceEndpoint)
            return try await sessions.beginSignIn(
                SignInRequest(service: "com.sorted.app", account: "ada", settings: settings, flow: .device,
                              redirectURI: URL(string: "http://127.0.0.1/unused")!, scopes: ["read"], lifetime: lifetime),
                owner: DeviceSignInTests.owner)
        }

        /// Completes `start`, moving the clock a second at a time whenever the manager sleeps.
        func complete(_ start: SignInStart, whileWaiting: @Sendable () async -> Void = {}) async throws -> SignInResult {
            let finished = Locked(false)
            let sessions = sessions
            let completion = Task {
                defer { finished.withLock { $0 = true } }
                return try await sessions.completeSignIn(start.flowID, callbackQuery: secure(""), owner: DeviceSignInTests.owner)
            }
            let guardUntil = ContinuousClock.now + .seconds(600)  // a hang guard, never waited for
            var first = true
            while !finished.withLock({ $0 }) {
                if sleeper.sleeping > 0 {
                    if first { await whileWaiting(); first = false }
                    clock.advance(by: 1)
                } else {
                    #expect(ContinuousClock.now < guardUntil, "the sign-in neither slept nor ended")
                    if ContinuousClock.now >= guardUntil { completion.cancel(); break }
                    try await Task.sleep(for: .milliseconds(1))  // not a spin: a busy machine needs the core
                }
            }
            return try await completion.value
        }

        /// Seconds between the sign-in's start and each poll, then between polls.
        func gaps(from start: Date) -> [TimeInterval] {
            let times = [start] + pollTimes.withLock { $0 }
            return zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
        }
    }

    @Test func beginAsksTheDeviceEndpointAndAnswersTheCodeAndPageButNeverTheDeviceCode() async throws {
        let rig = try Rig(polls: [])
        let start = try await rig.begin()
        let request = try #require(rig.transport.requests.first)
        #expect(request.url == Self.deviceEndpoint)
        #expect(request["client_id"] == "sorted-cli" && request["scope"] == "read")
        let device = try #require(start.device)
        #expect(device.userCode == "WDJB-MJHT" && device.interval == 5)
        #expect(device.verificationURI.absoluteString == "https://auth.example.test/device")
        #expect(start.authorizationURL.absoluteString == "https://auth.example.test/device?user_code=WDJB-MJHT")
        #expect(start.expiresAt == rig.clock.now.addingTimeInterval(300), "the shorter of the timeout and expires_in")
        #expect(!"\(start)".contains("DC-secret"))
    }

    @Test func pollsComeEveryIntervalAndFiveSecondsLaterAfterSlowDownUntilTheTokensAreStored() async throws {
        let rig = try Rig(polls: [.oauthError("authorization_pending"), .oauthError("slow_down"), .oauthError("authorization_pending"),
                                  .tokens(access: "A1", refresh: "R1")])
        let begun = rig.clock.now
        let start = try await rig.begin()
        let result = try await rig.complete(start)
        #expect(rig.gaps(from: begun) == [5, 5, 10, 10])
        let polls = rig.transport.requests.dropFirst()
        #expect(polls.allSatisfy { $0["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code" && $0["device_code"] == "DC-secret" })
        #expect(result.key == Self.key)
        #expect(try await rig.sessions.status(Self.key).hasRefreshToken)
        #expect(!rig.sessions.cancelSignIn(start.flowID, owner: Self.owner), "a completed sign-in is gone")
    }

    @Test(arguments: ["expired_token", "access_denied", "invalid_client"])
    func aFinalErrorEndsTheSignInAndStoresNothing(_ error: String) async throws {
        let rig = try Rig(polls: [.oauthError("authorization_pending"), .oauthError(error)])
        let start = try await rig.begin()
        let code = await vaultErrorCode { _ = try await rig.complete(start) }
        #expect(code == .providerRejected)
        #expect(rig.pollTimes.withLock { $0.count } == 2)
        #expect(try await rig.memory.list(service: "com.sorted.app").isEmpty)
        #expect(!rig.sessions.cancelSignIn(start.flowID, owner: Self.owner))
    }

    @Test func theWaitEndsWhenTheCodeExpiresWithoutAnotherPoll() async throws {
        let rig = try Rig(polls: [], authorization: Self.authorization.replacingOccurrences(of: "\"expires_in\":600", with: "\"expires_in\":12"))
        let begun = rig.clock.now
        let start = try await rig.begin()
        #expect(start.expiresAt == begun.addingTimeInterval(12))
        let code = await vaultErrorCode { _ = try await rig.complete(start) }
        #expect(code == .providerRejected)
        #expect(rig.gaps(from: begun) == [5, 5], "polls at 5 and 10 s; the code was dead by the next one")
        #expect(try await rig.memory.list(service: "com.sorted.app").isEmpty)
    }

    @Test func aCancelledSignInStopsPolling() async throws {
        let rig = try Rig(polls: [])
        let start = try await rig.begin()
        let sessions = rig.sessions
        let code = await vaultErrorCode {
            _ = try await rig.complete(start) {
                #expect(sessions.cancelSignIn(start.flowID, owner: Self.owner))
            }
        }
        #expect(code == .providerRejected)
        #expect(rig.pollTimes.withLock { $0.isEmpty })
    }

    @Test func theDaemonSettingTurnsTheDeviceFlowOffBeforeTheProviderIsAsked() async throws {
        let rig = try Rig(polls: [], deviceFlow: false)
        let error = await #expect(throws: VaultError.self) { _ = try await rig.begin() }
        #expect(error?.code == .invalidArgument && error?.reason.contains("device_flow = false") == true)
        #expect(rig.transport.requestCount == 0)
    }

    @Test func anOAuth2ProviderWithoutADeviceEndpointIsToldWhatIsMissing() async throws {
        let rig = try Rig(polls: [])
        let settings = ProviderSettings(kind: .oauth2, tokenEndpoint: tokenEndpoint, clientID: "sorted-cli")
        let error = await #expect(throws: VaultError.self) {
            _ = try await rig.sessions.beginSignIn(
                SignInRequest(service: "com.sorted.app", account: "ada", settings: settings, flow: .device,
                              redirectURI: URL(string: "http://127.0.0.1/unused")!, scopes: []), owner: Self.owner)
        }
        #expect(error?.code == .invalidArgument && error?.reason.contains("device authorization endpoint") == true)
    }
}
