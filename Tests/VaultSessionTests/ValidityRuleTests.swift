import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// "Still valid for min_valid" is one rule (``LoginSession/isValid(at:forAtLeast:)``): the login has
/// not ended and its access token lives at least `minValid` longer. AutoLogin and Status agree on it.
@Suite(.timeLimit(.minutes(20))) struct ValidityRuleTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func login(expiresIn: TimeInterval = 3600, refresh: String? = "R1", maximumLifetime: TimeInterval? = nil) throws -> LoginSession {
        LoginSession(signIn: TokenResponse(accessToken: secure("A1"), expiresIn: expiresIn, refreshToken: refresh.map(secure)),
                     provider: try testProvider(), at: start, maximumLifetime: maximumLifetime)
    }

    @Test func aLivingLoginIsValidUntilItsTokenHasLessThanMinValidLeft() throws {
        let login = try Self.login()
        #expect(login.isValid(at: Self.start, forAtLeast: 60))
        #expect(login.isValid(at: Self.start.addingTimeInterval(3540), forAtLeast: 60))
        #expect(!login.isValid(at: Self.start.addingTimeInterval(3541), forAtLeast: 60))
    }

    @Test func anEndedLoginIsNotValidWhateverItsAccessTokenSays() throws {
        let login = try Self.login(maximumLifetime: 600)
        let later = Self.start.addingTimeInterval(600)
        #expect(login.accessTokenIsValid(at: later, forAtLeast: 60))
        #expect(!login.isValid(at: later, forAtLeast: 60))
        let status = SessionStatus(login, now: later, minValid: 60, retryNotBefore: nil)
        #expect(status.state == "reauthRequired")
    }

    @Test func statusSaysValidExactlyWhenTheRuleDoes() throws {
        let login = try Self.login()
        for offset in [0.0, 3540, 3541, 3600, 3601] {
            let now = Self.start.addingTimeInterval(offset)
            let status = SessionStatus(login, now: now, minValid: 60, retryNotBefore: nil)
            #expect((status.state == "valid") == login.isValid(at: now, forAtLeast: 60), "at +\(offset)s")
        }
    }
}
