import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// A provider that echoes what it was sent must not get a token, a client secret or a key into our
/// error text (and from there into the daemon's log), however it encodes it.
@Suite(.timeLimit(.minutes(20))) struct ProviderErrorTextTests {
    static let token = "R1-refresh/token+with=odd~chars"
    static let clientSecret = "sorted-app-secret"
    static let text = ProviderErrorText(sent: [secure(token), secure(clientSecret)])

    static func base64(_ text: String, urlSafe: Bool = false) -> String {
        let encoded = Data(text.utf8).base64EncodedString()
        return urlSafe ? encoded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "") : encoded
    }

    static let echoes: [String] = [
        "bad token \(token)",
        "bad token " + token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
        "bad token R1%2drefresh%2ftoken%2bwith%3dodd%7echars",
        "body was grant_type=refresh_token&refresh_token=R1-refresh%2Ftoken%2Bwith%3Dodd~chars",
        "bad token " + token.replacingOccurrences(of: "/", with: "\\/"),
        "bad token " + token.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined(),
        "bad token " + base64(token),
        "bad token " + base64(token, urlSafe: true),
        "x" + base64("A" + token),
        "x" + base64("AB" + token + "tail"),
        "Authorization: Basic " + base64("sorted-desktop:" + clientSecret),
        "secret=" + clientSecret.uppercased().lowercased(),
    ]

    @Test(arguments: echoes)
    func anEchoedCredentialIsWithheldInAnyEncoding(_ echo: String) {
        #expect(Self.text.clean(echo) == ProviderErrorText.withheld, "\(echo)")
    }

    @Test(arguments: ["unknown client", "Invalid refresh token: not found", "client authentication failed (see RFC 6749 5.2)", "R1"])
    func plainWordsPassAsTheyAre(_ words: String) {
        #expect(Self.text.clean(words) == words)
    }

    @Test func textThatIsTooLongOrNotPrintableIsDropped() {
        #expect(Self.text.clean(String(repeating: "a", count: 513)) == nil)
        #expect(Self.text.clean("line\nbreak") == nil)
        #expect(Self.text.clean("caf\u{E9}") == nil)
        #expect(Self.text.clean("") == nil)
    }

    /// RFC 6749 providers (oauth2, oidc): their error_description and error reach ProviderRejected's
    /// text, and before this check they were passed through unfiltered.
    @Test(arguments: ["error_description", "error"])
    func anOAuth2ProviderEchoingTheRefreshTokenIsWithheldFromTheError(_ field: String) async throws {
        let echoed = "the refresh token R1-refresh-token is not valid for this client"
        let body = field == "error" ? #"{"error":"\#(echoed)"}"# : #"{"error":"invalid_client","error_description":"\#(echoed)"}"#
        let h = try SessionHarness([.answer(status: 401, body: body)])
        try await h.signIn(access: "A1", refresh: "R1-refresh-token")
        h.clock.advance(by: 3601)
        let error = await #expect(throws: VaultError.self) { _ = try await h.sessions.autoLogin(h.key) }
        #expect(error?.code == .providerRejected)
        #expect(error?.reason.contains("R1-refresh-token") == false, "\(error?.reason ?? "")")
        #expect(error.map { "\($0)" }?.contains("R1-refresh-token") == false)
    }
}
