import Foundation
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

func secure(_ text: String) -> SecureBytes {
    SecureBytes(copying: Array(text.utf8))
}

func text(_ bytes: SecureBytes?) -> String? {
    bytes?.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
}

/// The code of the `VaultError` that `body` throws, or nil when it throws nothing (or something else).
func vaultErrorCode(_ body: () async throws -> Void) async -> VaultError.Code? {
    do {
        try await body()
        return nil
    } catch let error as VaultError {
        return error.code
    } catch {
        return nil
    }
}

/// The `VaultError` that `body` throws, or nil.
func vaultError(_ body: () throws -> Void) -> VaultError? {
    do {
        try body()
        return nil
    } catch {
        return error as? VaultError
    }
}

let tokenEndpoint = URL(string: "https://auth.example.test/oauth/token")!
let revocationEndpoint = URL(string: "https://auth.example.test/oauth/revoke")!

func testProvider(revocation: Bool = true, secret: String? = "client-secret",
                  authentication: OAuthProvider.ClientAuthentication = .basic) throws -> OAuthProvider {
    try OAuthProvider(tokenEndpoint: tokenEndpoint, revocationEndpoint: revocation ? revocationEndpoint : nil,
                      clientID: "sorted-desktop", clientSecret: secret.map(secure), clientAuthentication: authentication)
}

/// A manager over an in-memory store, a manual clock, a scripted transport and fixed jitter (0.5).
struct SessionHarness: Sendable {
    let clock: ManualClock
    /// What the manager writes to (the in-memory store, or a wrapper around it).
    let store: any TokenStore
    /// The in-memory store underneath, for reading what was written.
    let memory: InMemoryTokenStore
    let transport: ScriptedOAuthTransport
    let sessions: SessionManager
    let key: ItemKey
    let provider: OAuthProvider
    let configuration: SessionManager.Configuration
    /// The clock's time when the harness was made.
    let start: Date

    static let key = try! ItemKey(service: "com.sorted.app", account: "ada")

    /// Jitter is always 0.5: retry delays are ¾ of their ceiling (1.5 s after the first failure),
    /// and proactive refresh starts `minValid + refreshAhead + refreshJitter / 2` before expiry.
    static let random: @Sendable () -> Double = { 0.5 }

    init(_ script: [ScriptedOAuthTransport.Reply] = [], configuration: SessionManager.Configuration = .init(),
         provider: OAuthProvider? = nil, wrap: (InMemoryTokenStore) -> any TokenStore = { $0 }) throws {
        try self.init(configuration: configuration, provider: provider, wrap: wrap) { _, _ in ScriptedOAuthTransport(script) }
    }

    /// `makeTransport` gets the store and clock, for transports whose answers change the store.
    init(configuration: SessionManager.Configuration = .init(), provider: OAuthProvider? = nil,
         wrap: (InMemoryTokenStore) -> any TokenStore = { $0 },
         makeTransport: (InMemoryTokenStore, ManualClock) -> ScriptedOAuthTransport) throws {
        clock = ManualClock()
        start = clock.now
        memory = InMemoryTokenStore(clock: clock)
        store = wrap(memory)
        transport = makeTransport(memory, clock)
        sessions = try SessionManager(store: store, transport: transport, clock: clock, configuration: configuration,
                                      random: Self.random)
        key = Self.key
        self.configuration = configuration
        self.provider = try provider ?? testProvider()
    }

    /// Another manager over the same store, as after a daemon restart.
    func restartedManager() throws -> SessionManager {
        try SessionManager(store: store, transport: transport, clock: clock, configuration: configuration,
                           random: Self.random)
    }

    /// Signs in with access token `access` (and refresh token `refresh`) living `expiresIn` seconds.
    @discardableResult
    func signIn(access: String = "A1", refresh: String? = "R1", expiresIn: TimeInterval? = 3600,
                refreshExpiresIn: TimeInterval? = nil, maximumLifetime: TimeInterval? = nil) async throws -> SessionStatus {
        try await sessions.save(
            TokenResponse(accessToken: secure(access), expiresIn: expiresIn, refreshToken: refresh.map(secure),
                          refreshTokenExpiresIn: refreshExpiresIn),
            provider: provider, for: key, maximumLifetime: maximumLifetime)
    }

    /// The login as the store holds it right now, or nil.
    func storedLogin() async throws -> LoginSession? {
        do {
            return try LoginSession(sealedRecord: try await memory.retrieve(try SessionItems.item(for: key)).secret)
        } catch let error as VaultError where error.code == .notFound {
            return nil
        }
    }

    /// The queued revocation records in the store.
    func revocationRecords() async throws -> [ItemMetadata] {
        try await memory.list(service: SessionItems.revocationService)
    }

}

extension AutoLoginResult {
    var accessToken: String? { text(grant?.accessToken) }

    var reauthReason: ReauthReason? {
        if case .reauthRequired(let reason) = self { return reason }
        return nil
    }
}

/// Collects the events `action` causes: it then saves a login under a sentinel key and returns
/// everything published before that sentinel's `.saved`, so no test waits on a timer.
func events(of sessions: SessionManager, provider: OAuthProvider,
            during action: () async throws -> Void) async throws -> [SessionEvent] {
    let stream = sessions.events()
    try await action()
    let sentinel = try ItemKey(service: "sentinel", account: "end-of-events")
    try await sessions.save(TokenResponse(accessToken: secure("sentinel")), provider: provider, for: sentinel)
    var collected: [SessionEvent] = []
    for await event in stream {
        if event.key == sentinel { break }
        collected.append(event)
    }
    return collected
}


/// `body`'s result, or nil when it has not finished within `seconds` of real time. A watchdog for
/// code that must not block: it returns as soon as `body` does, so a regression fails the test
/// instead of hanging the run (a blocked `body` is left behind). Give it ten minutes: a busy
/// machine has starved a task for over a minute, and nobody waits for the watchdog when the code is right.
func finishes<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    do {
        return try await withHangGuard(limit: .milliseconds(Int64(seconds * 1000)), "the watched call", body)
    } catch is WaitTimedOut {
        return nil
    }
}
