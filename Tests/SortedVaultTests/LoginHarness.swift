import Foundation
import SortedVault
import VaultTesting

/// A `VaultLogin` over an in-process `SessionManager`: an in-memory store, a scripted provider and
/// a manual clock, as an app's own tests would set it up. The manager's `minValid` is the shipped 60 s.
struct LoginHarness {
    let clock = ManualClock()
    let transport: ScriptedOAuthTransport
    let manager: SessionManager
    let login: VaultLogin

    static let provider = ProviderSettings(kind: .oauth2, tokenEndpoint: URL(string: "https://auth.example.test/oauth/token")!,
                                           clientID: "sorted-desktop")

    init(_ script: [ScriptedOAuthTransport.Reply] = []) throws {
        transport = ScriptedOAuthTransport(script)
        manager = try SessionManager(store: InMemoryTokenStore(clock: clock), transport: transport, clock: clock,
                                 configuration: .init(proactiveRefresh: false), random: { 0.5 })
        login = try VaultLogin(service: "com.sorted.api", account: "ada", in: manager, clock: clock)
    }

    /// Signs in with access token `A1` (an hour) and refresh token `R1`.
    @discardableResult
    func signIn() async throws -> SessionStatus {
        let answer = #"{"access_token":"A1","token_type":"Bearer","expires_in":3600,"refresh_token":"R1"}"#
        return try await login.save(tokenResponseJSON: SecureBytes(copying: Array(answer.utf8)), provider: Self.provider)
    }
}

/// The error `body` throws, or nil.
func thrown(_ body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}
