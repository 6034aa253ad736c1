import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// Password sign-ins the manager runs against a scripted Firebase and Supabase.
@Suite(.timeLimit(.minutes(20))) struct PasswordSignInTests {
    static let firebase = ProviderSettings(kind: .firebase, url: URL(string: "http://127.0.0.1:9099/securetoken.googleapis.com")!,
                                           apiKey: secure("web-api-key"))
    static let supabase = ProviderSettings(kind: .supabase, url: URL(string: "https://abc.supabase.test")!, apiKey: secure("anon-key"))
    static let firebaseAnswer = ScriptedOAuthTransport.Reply.answer(
        status: 200, body: #"{"localId":"u-1","email":"ada@example.com","idToken":"ID1","refreshToken":"R1","expiresIn":"3600"}"#)

    func request(_ settings: ProviderSettings, create: Bool = false) -> PasswordSignIn {
        PasswordSignIn(service: "com.sorted.app", account: nil, settings: settings, email: "ada@example.com",
                       password: secure("correct horse"), create: create)
    }

    @Test(arguments: [(false, "accounts:signInWithPassword"), (true, "accounts:signUp")])
    func firebaseSendsTheEmailAndPasswordToIdentityToolkitAndStoresTheAnswer(_ create: Bool, _ method: String) async throws {
        let h = try SessionHarness([Self.firebaseAnswer])
        let result = try await h.sessions.signInWithPassword(request(Self.firebase, create: create))
        let sent = try #require(h.transport.requests.first)
        #expect(sent.url.absoluteString == "http://127.0.0.1:9099/identitytoolkit.googleapis.com/v1/\(method)")
        #expect(sent.query("key") == "web-api-key")
        #expect(sent.json("email") == "ada@example.com" && sent.json("password") == "correct horse")
        #expect(result.key.account == "ada@example.com" && result.status.userID == "u-1")
    }

    @Test func aFirebaseAccountWithASecondFactorIsToldItIsNotSupportedAndNothingIsStored() async throws {
        let h = try SessionHarness([.answer(status: 200, body: #"{"mfaPendingCredential":"P","mfaInfo":[{"mfaEnrollmentId":"e"}],"localId":"u-1"}"#)])
        let error = await #expect(throws: VaultError.self) { _ = try await h.sessions.signInWithPassword(request(Self.firebase)) }
        #expect(error?.code == .invalidArgument && error?.reason.contains("multi-factor sign-in is not supported yet") == true)
        #expect(try await h.memory.list(service: "com.sorted.app").isEmpty)
    }

    @Test(arguments: [(false, "https://abc.supabase.test/auth/v1/token?grant_type=password"), (true, "https://abc.supabase.test/auth/v1/signup")])
    func supabaseSendsTheEmailAndPasswordWithTheAnonKey(_ create: Bool, _ url: String) async throws {
        let h = try SessionHarness([.tokens(access: "A1", refresh: "R1")])
        let result = try await h.sessions.signInWithPassword(request(Self.supabase, create: create))
        let sent = try #require(h.transport.requests.first)
        #expect(sent.sentURL.absoluteString == url)
        #expect(sent.headers["apikey"] == "anon-key")
        #expect(sent.json("password") == "correct horse")
        #expect(result.key.account == "ada@example.com")
    }

    @Test func wrongCredentialsAreTheProvidersReasonWithoutThePassword() async throws {
        let h = try SessionHarness([.answer(status: 400, body: #"{"code":400,"error_code":"invalid_credentials","msg":"Invalid login credentials"}"#)])
        let error = await #expect(throws: VaultError.self) { _ = try await h.sessions.signInWithPassword(request(Self.supabase)) }
        #expect(error?.code == .providerRejected && error?.reason.contains("invalid_credentials") == true)
        #expect(error?.reason.contains("correct horse") == false)
    }

    @Test func anOAuth2ProviderIsSentToTheBrowserFlows() async throws {
        let h = try SessionHarness([])
        let settings = ProviderSettings(kind: .oauth2, tokenEndpoint: tokenEndpoint, clientID: "c")
        let error = await #expect(throws: VaultError.self) { _ = try await h.sessions.signInWithPassword(request(settings)) }
        #expect(error?.code == .invalidArgument && h.transport.requestCount == 0)
    }
}
