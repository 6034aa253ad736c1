import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// Who a sign-in stores: an account that holds a user's login takes no other user's, and a name the
/// provider chose must be one a terminal shows as itself (issue 34, points 2 and 12).
@Suite(.timeLimit(.minutes(20))) struct SignInIdentityTests {
    static let owner = SignInTests.owner

    /// A new harness, and a sign-in for `account` completed as `subject` on it.
    func signIn(account: String?, subject: String) async throws -> (SessionHarness, Result<SignInResult, VaultError>) {
        let h = try await SignInTests().harness()
        return (h, try await signIn(h, account: account, subject: subject))
    }

    /// Begins and completes a sign-in for `account` as `subject` on the harness `h`.
    func signIn(_ h: SessionHarness, account: String?, subject: String) async throws -> Result<SignInResult, VaultError> {
        let start = try await h.sessions.beginSignIn(SignInTests().oidcRequest(account: account), owner: Self.owner)
        let state = try #require(SignInTests().parameter("state", of: start.authorizationURL))
        let nonce = try #require(SignInTests().parameter("nonce", of: start.authorizationURL))
        // The subject travels percent-encoded, as a real one travels base64url-encoded inside a
        // JWT: the token itself stays ASCII, and only the verified subject holds the characters.
        let idToken = JSONValueText.quoted("good-\(OpenIDSessionTests.ScriptedVerifier.encoded(subject))|nonce=\(nonce)")
        h.transport.enqueue(.answer(status: 200, body: #"{"access_token":"A1","token_type":"Bearer","expires_in":3600,"refresh_token":"R1","id_token":\#(idToken)}"#))
        do {
            return .success(try await h.sessions.completeSignIn(start.flowID, callbackQuery: secure("code=c&state=\(state)"), owner: Self.owner))
        } catch let error as VaultError {
            return .failure(error)
        }
    }

    /// The account "ada" holds ada's login; a sign-in for "ada" that comes back as mallory (her
    /// code delivered to the receiver first) is refused, and ada's login is kept.
    @Test func aSignInForANamedAccountCompletedAsAnotherUserIsRefusedAndTheLoginKept() async throws {
        let (h, first) = try await signIn(account: "ada", subject: "user-ada")
        #expect(try first.get().status.userID == "user-ada")
        let before = try await h.sessions.status(try ItemKey(service: "com.sorted.app", account: "ada"))
        let second = try await signIn(h, account: "ada", subject: "mallory")
        guard case .failure(let error) = second else { Issue.record("stored: \(second)"); return }
        #expect(error.code == .providerRejected && error.reason.contains("\"user-ada\"") && error.reason.contains("\"mallory\""), "\(error.reason)")
        let after = try await h.sessions.status(try ItemKey(service: "com.sorted.app", account: "ada"))
        #expect(after.userID == "user-ada" && after.signedInAt == before.signedInAt, "ada's login is kept")
        // The same user signing in again is fine; so is a first sign-in under a new label.
        #expect(try await signIn(h, account: "ada", subject: "user-ada").get().status.userID == "user-ada")
        #expect(try await signIn(h, account: "work", subject: "mallory").get().key.account == "work")
    }

    @Test(arguments: ["ev\u{202E}lam", "line\u{2028}two", "para\u{2029}graph", "zero\u{200B}width", "bell\u{07}"])
    func aSubjectWithFormatOrSeparatorCharactersIsRefusedNotStored(_ subject: String) async throws {
        let (h, outcome) = try await signIn(account: nil, subject: subject)
        guard case .failure(let error) = outcome else { Issue.record("stored: \(outcome)"); return }
        #expect(error.code == .providerRejected && error.reason.contains("would show another name"), "\(error.reason)")
        #expect(!error.reason.unicodeScalars.contains { ProviderChosenName.isHidden($0) }, "the error shows the name escaped: \(error.reason.debugDescription)")
        #expect(try await h.sessions.list(service: nil).isEmpty, "nothing was stored")
    }
}

/// JSON string quoting for a test's hand-written answer (every non-ASCII or control scalar of the BMP as `\uXXXX`).
enum JSONValueText {
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { out += "\\" + String(scalar) }
            else if scalar.value < 0x20 || scalar.value >= 0x7F { out += String(format: "\\u%04x", scalar.value) }
            else { out.unicodeScalars.append(scalar) }
        }
        return out + "\""
    }
}
