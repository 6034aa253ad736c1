import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// What one provider answer must come to, for the per-kind outcome tables.
enum ExpectedOutcome: Sendable, CustomStringConvertible {
    case refreshed(token: String)
    case reauthRequired
    case offline
    /// ProviderRejected whose text contains this.
    case rejected(containing: String)

    var description: String {
        switch self {
        case .refreshed(let token): return "refreshed(\(token))"
        case .reauthRequired: return "reauthRequired"
        case .offline: return "offline"
        case .rejected(let text): return "ProviderRejected(\(text))"
        }
    }
}

/// One row of a kind's table: the provider's answer and the outcome it must give.
struct AnswerRow: Sendable, CustomTestStringConvertible {
    let name: String
    let reply: ScriptedOAuthTransport.Reply
    let expected: ExpectedOutcome

    var testDescription: String { "\(name) → \(expected)" }
}

extension SessionHarness {
    /// Signs in, lets the access token expire, asks AutoLogin once with `row`'s answer scripted,
    /// and checks the outcome, what is left in the store, and that no token reached the error text.
    func check(_ row: AnswerRow, secrets: [String]) async throws {
        transport.enqueue(row.reply)
        try await signIn(access: "ID1", refresh: "R1-refresh-token")
        clock.advance(by: 3601)
        var outcome: AutoLoginResult?
        var thrown: VaultError?
        do {
            outcome = try await sessions.autoLogin(key)
        } catch let error as VaultError {
            thrown = error
        }
        #expect(transport.requestCount == 1)
        let stored = try await storedLogin()
        switch row.expected {
        case .refreshed(let token):
            #expect(outcome?.outcome == "refreshed")
            #expect(outcome?.accessToken == token)
            #expect(text(stored?.accessToken) == token)
        case .reauthRequired:
            #expect(outcome?.reauthReason == .refreshRejected)
            #expect(stored == nil, "a dead login is wiped")
        case .offline:
            #expect(outcome?.outcome == "offline")
            #expect(text(stored?.refreshToken) == "R1-refresh-token", "nothing is deleted")
        case .rejected(let containing):
            #expect(thrown?.code == .providerRejected, "got \(String(describing: outcome))")
            #expect(thrown?.reason.contains(containing) == true, "\(thrown?.reason ?? "no error")")
            #expect(text(stored?.refreshToken) == "R1-refresh-token", "nothing is deleted")
        }
        for secret in secrets + ["R1-refresh-token"] {
            #expect(!(thrown?.reason.contains(secret) ?? false), "a secret in the error text")
            #expect(!"\(String(describing: outcome))".contains(secret))
        }
    }
}

/// A Google-style error object, as Firebase answers.
func firebaseError(_ message: String, status: Int = 400) -> ScriptedOAuthTransport.Reply {
    .answer(status: status, body: #"{"error":{"code":\#(status),"message":"\#(message)","status":"INVALID_ARGUMENT","errors":[{"message":"\#(message)","domain":"global","reason":"invalid"}]}}"#)
}

/// GoTrue's current error shape.
func gotrueError(_ code: String, status: Int = 400, message: String = "Invalid Refresh Token") -> ScriptedOAuthTransport.Reply {
    .answer(status: status, body: #"{"code":\#(status),"error_code":"\#(code)","msg":"\#(message)"}"#)
}
