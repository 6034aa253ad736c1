import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession

@Suite(.timeLimit(.minutes(20))) struct TokenResponseParsingTests {
    func parse(_ json: String) throws -> TokenResponse {
        try TokenResponse(json: Array(json.utf8))
    }

    @Test func aFullRFC6749Response() throws {
        let response = try parse("""
            {"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"example","expires_in":3600,
             "refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA","refresh_token_expires_in":86400,
             "scope":"read write  profile","example_parameter":"example_value"}
            """)
        #expect(text(response.accessToken) == "2YotnFZFEjr1zCsicMWpAA")
        #expect(response.tokenType == "example")
        #expect(response.expiresIn == 3600)
        #expect(text(response.refreshToken) == "tGzv3JOkF0XG5Qx2TlKWIA")
        #expect(response.refreshTokenExpiresIn == 86400)
        #expect(response.scopes == ["read", "write", "profile"])
        #expect(response.idToken == nil)
        #expect(response.userID == nil)
    }

    @Test func theMinimalResponseLeavesOptionalFieldsNil() throws {
        let response = try parse(#"{"access_token":"a","token_type":"Bearer","scope":null,"expires_in":null}"#)
        #expect(response.expiresIn == nil)
        #expect(response.refreshToken == nil)
        #expect(response.scopes == nil)
    }

    @Test func expiresInAsANumericStringLikeFirebase() throws {
        let response = try parse(#"{"access_token":"a","token_type":"Bearer","expires_in":"3600","refresh_token":"r"}"#)
        #expect(response.expiresIn == 3600)
    }

    @Test(arguments: [#""soon""#, "-1", "1e300", #""""#, "true"])
    func expiresInThatIsNotSecondsIsRefused(_ value: String) {
        let error = vaultError { _ = try parse(#"{"access_token":"a","token_type":"Bearer","expires_in":\#(value)}"#) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func userIDFromUserIDLikeFirebase() throws {
        let response = try parse(#"{"access_token":"a","token_type":"Bearer","user_id":"fb-uid-7"}"#)
        #expect(response.userID == "fb-uid-7")
    }

    @Test func userIDFromUserObjectLikeSupabase() throws {
        let response = try parse(#"{"access_token":"a","token_type":"bearer","user":{"id":"8f2c-uuid","email":"a@b.c"}}"#)
        #expect(response.userID == "8f2c-uuid")
    }

    @Test func userIDFromTheIDTokenSubClaim() throws {
        // Payload {"sub":"user-42","n":"??>>"}: base64url with "_" and no padding.
        let payload = "eyJzdWIiOiJ1c2VyLTQyIiwibiI6Ij8_Pj4ifQ"
        let idToken = "eyJhbGciOiJub25lIn0.\(payload).c2ln"
        let response = try parse(#"{"access_token":"a","token_type":"Bearer","id_token":"\#(idToken)"}"#)
        #expect(text(response.idToken) == idToken)
        #expect(response.userID == "user-42")
    }

    @Test func anExplicitUserIDWinsOverTheIDToken() throws {
        let idToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c2VyLTQyIiwibiI6Ij8-fiJ9.c2ln"
        let response = try parse(#"{"access_token":"a","token_type":"Bearer","user_id":"explicit","id_token":"\#(idToken)"}"#)
        #expect(response.userID == "explicit")
    }

    @Test func anIDTokenThatIsNotAJWTGivesNoUserID() throws {
        let response = try parse(#"{"access_token":"a","token_type":"Bearer","id_token":"opaque-id-token"}"#)
        #expect(response.userID == nil)
    }

    @Test(arguments: [
        #"{"token_type":"Bearer"}"#,
        #"{"access_token":42,"token_type":"Bearer"}"#,
        #"{"access_token":"","token_type":"Bearer"}"#,
        #"{"access_token":"a"}"#,
        #"{"access_token":"a","token_type":""}"#,
        #"{"access_token":"a","token_type":"Bear er"}"#,
        #"["access_token","a"]"#,
        #""access_token""#,
        "null",
        "{",
        "",
        #"{"access_token":"a","token_type":"Bearer","scope":["read"]}"#,
        #"{"access_token":"a\x","token_type":"Bearer"}"#,
        #"{"access_token":"a\ud800","token_type":"Bearer"}"#,
        #"{"access_token":"a\u00e9","token_type":"Bearer"}"#,
        #"{"access_token":"a\u00","token_type":"Bearer"}"#,
        #"{"access_token":"a","token_type":"Bearer","access_token":"b"}"#,
    ])
    func malformedResponsesAreInvalidArguments(_ json: String) {
        #expect(vaultError { _ = try parse(json) }?.code == .invalidArgument)
    }

    @Test func anOverSizeBodyIsRefusedBeforeParsing() {
        let padding = String(repeating: " ", count: TokenResponse.maximumBytes)
        let error = vaultError { _ = try parse(#"{"access_token":"a","token_type":"Bearer"}"# + padding) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.reason.contains("\(TokenResponse.maximumBytes)") == true)
    }

    @Test func anOverLongTokenIsRefused() {
        let long = String(repeating: "t", count: TokenResponse.maximumTokenBytes + 1)
        #expect(vaultError { _ = try parse(#"{"access_token":"\#(long)","token_type":"Bearer"}"#) }?.code == .invalidArgument)
    }

    /// Every refusal names the field, never the value: the marker must not appear in any error text.
    @Test(arguments: [
        #"{"access_token":"SECRET-MARKER\u0007","token_type":"Bearer"}"#,
        #"{"access_token":"SECRET-MARKER\n","token_type":"Bearer"}"#,
        #"{"access_token":"ok","token_type":"Bearer","refresh_token":"SECRET-MARKER\u0000"}"#,
        #"{"access_token":"ok","token_type":"Bearer","id_token":"SECRET-MARKER\u001b"}"#,
        #"{"access_token":"SECRET-MARKER","token_type":"SECRET-MARKER\t"}"#,
        #"{"access_token":"SECRET-MARKER","token_type":"Bearer","expires_in":"SECRET-MARKER"}"#,
        #"{"access_token":"SECRET-MARKER","token_type":"Bearer","scope":{"SECRET-MARKER":1}}"#,
        #"{"access_token":"SECRET-MARKER"#,
        #"{"access_token":"SECRET-MARKER","token_type":"Bearer",}"#,
    ])
    func errorTextNeverContainsTheTokenValue(_ json: String) {
        do {
            _ = try parse(json)
            Issue.record("accepted a malformed response")
        } catch let error as VaultError {
            #expect(error.code == .invalidArgument)
            #expect(!error.reason.contains("SECRET-MARKER"))
            #expect(!"\(error)".contains("SECRET-MARKER"))
            #expect(!String(reflecting: error).contains("SECRET-MARKER"))
        } catch {
            Issue.record("unexpected error type \(type(of: error))")
        }
    }

    @Test func descriptionNeverShowsTokens() throws {
        let response = try parse(#"{"access_token":"ACCESS-MARKER","token_type":"Bearer","refresh_token":"REFRESH-MARKER","id_token":"ID-MARKER"}"#)
        for shown in ["\(response)", String(reflecting: response)] {
            #expect(!shown.contains("ACCESS-MARKER"))
            #expect(!shown.contains("REFRESH-MARKER"))
            #expect(!shown.contains("ID-MARKER"))
        }
    }

    /// A token never becomes a `String`: the parser hands its text over raw, it is unescaped straight
    /// into secure memory, and the parsed object no longer holds it.
    @Test func tokensGoFromTheTextIntoSecureMemoryAndNotIntoTheParsedObject() throws {
        let json = #"{"access_token":"a.b","token_type":"Bearer","refresh_token":"r","id_token":"i","idToken":"x","refreshToken":"y","n":"o"}"#
        let (object, tokens) = try TokenResponse.parse(json: Array(json.utf8)) { $0 }
        #expect(Set(object.keys) == ["token_type", "n"])
        #expect(Set(tokens.keys) == TokenResponse.tokenMembers)
        #expect(text(tokens["access_token"]) == "a.b")
        #expect(text(tokens["refreshToken"]) == "y")
    }

    @Test func aTokenMemberThatIsNotAStringStaysInTheObject() throws {
        let (object, tokens) = try TokenResponse.parse(json: Array(#"{"access_token":"a","refresh_token":null,"id_token":7}"#.utf8)) { $0 }
        #expect(object["refresh_token"] == .null)
        #expect(object["id_token"] == .int(7))
        #expect(Set(tokens.keys) == ["access_token"])
    }

    @Test func escapesInATokenAreResolvedIntoItsBytes() throws {
        let response = try parse(#"{"access_token":"a\/b\u0041\"c\\d","token_type":"Bearer","refresh_token":"\u0072"}"#)
        #expect(text(response.accessToken) == #"a/bA"c\d"#)
        #expect(text(response.refreshToken) == "r")
    }

    @Test func theFirebaseAnswerReadsItsTokensFromSecureMemoryToo() throws {
        let json = #"{"idToken":"h.p\/s","refreshToken":"R","expiresIn":"3600","localId":"u1","id_token":"ignored"}"#
        let response = try TokenResponse(json: Array(json.utf8), kind: .firebase)
        #expect(text(response.accessToken) == "h.p/s")
        #expect(text(response.idToken) == "h.p/s")
        #expect(text(response.refreshToken) == "R")
        #expect(response.userID == "u1")
        #expect(vaultError { _ = try TokenResponse(json: Array(#"{"idToken":"i","refreshToken":5}"#.utf8), kind: .firebase) }?.code == .invalidArgument)
    }
}
