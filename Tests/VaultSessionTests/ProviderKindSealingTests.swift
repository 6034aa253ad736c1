import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession

/// Provider kinds are stored sealed with the login; records from before kinds read as oauth2.
@Suite(.timeLimit(.minutes(20))) struct ProviderKindSealingTests {
    static let signedIn = Date(timeIntervalSince1970: 1_800_000_000)

    func login(_ provider: OAuthProvider) -> LoginSession {
        LoginSession(signIn: TokenResponse(accessToken: secure("ID1"), expiresIn: 3600, refreshToken: secure("R1")),
                     provider: provider, at: Self.signedIn)
    }

    @Test func aFirebaseLoginRoundTripsWithItsKeyAndBase() throws {
        let provider = try OAuthProvider.firebase(apiKey: secure("AIza-key"),
                                                  securetokenBase: URL(string: "http://127.0.0.1:9099/securetoken.googleapis.com")!)
        let read = try LoginSession(sealedRecord: login(provider).sealedRecord())
        #expect(read.provider.kind == .firebase)
        #expect(text(read.provider.apiKey) == "AIza-key")
        #expect(read.provider.baseURL?.absoluteString == "http://127.0.0.1:9099/securetoken.googleapis.com")
        #expect(read.provider == provider)
    }

    @Test func aSupabaseLoginRoundTripsWithItsKeyAndURL() throws {
        let provider = try OAuthProvider.supabase(projectURL: URL(string: "https://abc.supabase.co/")!, apiKey: secure("anon"))
        let read = try LoginSession(sealedRecord: login(provider).sealedRecord())
        #expect(read.provider.kind == .supabase)
        #expect(text(read.provider.apiKey) == "anon")
        #expect(read.provider.tokenEndpoint.absoluteString == "https://abc.supabase.co/auth/v1/token")
        #expect(read.provider.revocationEndpoint?.absoluteString == "https://abc.supabase.co/auth/v1/logout")
        #expect(read.provider == provider)
        let revocation = QueuedRevocation(for: read, login: try ItemKey(service: "s", account: "a"), at: Self.signedIn)
        #expect(try QueuedRevocation(id: revocation.id, sealedRecord: revocation.sealedRecord()).provider == provider)
    }

    @Test func everyTruncationOfAFirebaseRecordIsAnError() throws {
        let record = try login(OAuthProvider.firebase(apiKey: secure("AIza-key"))).sealedRecord().withUnsafeBytes { Array($0) }
        for length in 0..<record.count {
            #expect(vaultError { _ = try LoginSession(sealedRecord: SecureBytes(copying: record[0..<length])) } != nil, "prefix of \(length) bytes")
        }
    }

    /// A record as the build before provider kinds wrote it (tags 1, 4, 9, 10, 17, 12, 14, 16 only).
    @Test func aRecordWithoutAKindIsAnOAuth2Login() throws {
        var record = Array("SVS1".utf8)
        func field(_ tag: UInt8, _ bytes: [UInt8]) {
            let n = bytes.count
            record += [tag, UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + bytes
        }
        let date = withUnsafeBytes(of: Self.signedIn.timeIntervalSince1970.bitPattern.bigEndian) { Array($0) }
        field(1, Array("old-access".utf8))
        field(2, Array("old-refresh".utf8))
        field(4, Array("Bearer".utf8))
        field(9, date)
        field(10, date)
        field(17, Array(repeating: 7, count: 16))
        field(12, Array("https://auth.example.test/oauth/token".utf8))
        field(14, Array("sorted-desktop".utf8))
        field(16, Array("basic".utf8))
        let read = try LoginSession(sealedRecord: SecureBytes(copying: record))
        #expect(read.provider.kind == .oauth2)
        #expect(read.provider.clientID == "sorted-desktop")
        #expect(read.provider.apiKey == nil)
        #expect(text(read.refreshToken) == "old-refresh")
    }

    @Test func anUnknownKindAsksForAnUpdate() throws {
        var record = try login(testProvider()).sealedRecord().withUnsafeBytes { Array($0) }
        record += [21, 0, 0, 0, 6] + Array("future".utf8)  // a later field of the same tag wins
        let error = vaultError { _ = try LoginSession(sealedRecord: SecureBytes(copying: record)) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.reason.contains("update sortedvault") == true)
    }

    @Test func theAPIKeyIsNeverShown() throws {
        let firebase = try OAuthProvider.firebase(apiKey: secure("AIza-key"))
        let supabase = try OAuthProvider.supabase(projectURL: URL(string: "https://abc.supabase.co")!, apiKey: secure("anon-key"))
        for shown in ["\(firebase)", "\(supabase)", "\(login(firebase))", "\(ProviderSettings(firebase))",
                      firebase.tokenEndpoint.absoluteString] {
            #expect(!shown.contains("AIza-key"))
            #expect(!shown.contains("anon-key"))
        }
    }

    @Test func settingsOfAnotherKindAreRefused() throws {
        var settings = ProviderSettings(kind: .firebase, clientID: "web", apiKey: secure("k"))
        #expect(vaultError { _ = try settings.resolved() }?.reason.contains("takes no client id") == true)
        settings = ProviderSettings(kind: .supabase, apiKey: secure("k"))
        #expect(vaultError { _ = try settings.resolved() }?.reason.contains("project URL") == true)
        settings = ProviderSettings(kind: .supabase, url: URL(string: "http://evil.example")!, apiKey: secure("k"))
        #expect(vaultError { _ = try settings.resolved() }?.reason.contains("https") == true)
        settings = ProviderSettings(kind: .firebase, apiKey: secure("has space"))
        #expect(vaultError { _ = try settings.resolved() }?.code == .invalidArgument)
        settings = ProviderSettings(kind: .oauth2, tokenEndpoint: tokenEndpoint, clientID: "c", apiKey: secure("k"))
        #expect(vaultError { _ = try settings.resolved() }?.reason.contains("takes no API key") == true)
    }

    @Test func firebaseSignInShapesBothParse() throws {
        let identitytoolkit = #"{"kind":"identitytoolkit#VerifyPasswordResponse","localId":"uid-1","email":"a@b.c","idToken":"ID1","registered":true,"refreshToken":"R1","expiresIn":"3600"}"#
        let securetoken = #"{"access_token":"ID1","expires_in":"3600","token_type":"Bearer","refresh_token":"R1","id_token":"ID1","user_id":"uid-1","project_id":"9"}"#
        for json in [identitytoolkit, securetoken] {
            let response = try TokenResponse(json: Array(json.utf8), kind: .firebase)
            #expect(text(response.accessToken) == "ID1")
            #expect(text(response.idToken) == "ID1")
            #expect(text(response.refreshToken) == "R1")
            #expect(response.expiresIn == 3600)
            #expect(response.userID == "uid-1")
            #expect(response.tokenType == "Bearer")
        }
        let error = vaultError { _ = try TokenResponse(json: Array(#"{"refreshToken":"R1"}"#.utf8), kind: .firebase) }
        #expect(error?.reason.contains("idToken") == true)
    }

    @Test func aSecretQueryParameterIsOnlyInTheSentURL() throws {
        let request = OAuthHTTPRequest(url: URL(string: "https://securetoken.googleapis.com/v1/token")!, body: secure(""),
                                       secretQuery: [SecretParameter(name: "key", value: secure("a/b+c"))])
        #expect(request.url.absoluteString == "https://securetoken.googleapis.com/v1/token")
        #expect(request.sendURL().absoluteString == "https://securetoken.googleapis.com/v1/token?key=a%2Fb%2Bc")
    }

    @Test func aJSONBodyEscapesQuotesAndControlBytes() {
        var body = JSONBody()
        body.add("refresh_token", secret: secure("a\"b\\c\nd"))
        #expect(text(body.finish()) == #"{"refresh_token":"a\u0022b\u005cc\u000ad"}"#)
    }
}
