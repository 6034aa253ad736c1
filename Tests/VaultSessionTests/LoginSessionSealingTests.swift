import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession

@Suite(.timeLimit(.minutes(20))) struct LoginSessionSealingTests {
    /// A login with every field set, dates with fractions of a second.
    func everyField() throws -> LoginSession {
        let base = Date(timeIntervalSince1970: 1_800_000_000.123456)
        return LoginSession(
            accessToken: secure("access-token"), refreshToken: secure("refresh-token"), idToken: secure("a.b.c"),
            tokenType: "DPoP", scopes: ["openid", "profile", "offline_access"],
            accessTokenExpiresAt: base.addingTimeInterval(3600.5), refreshTokenExpiresAt: base.addingTimeInterval(86400),
            absoluteExpiresAt: base.addingTimeInterval(30 * 86400), issuedAt: base.addingTimeInterval(-10),
            signedInAt: base.addingTimeInterval(-7200), lastRefreshedAt: base.addingTimeInterval(-10), userID: "user-é-42",
            provider: try testProvider(secret: "s3cret", authentication: .post), loginID: Array(0..<16))
    }

    @Test func everyFieldRoundTrips() throws {
        let session = try everyField()
        let read = try LoginSession(sealedRecord: session.sealedRecord())
        #expect(text(read.accessToken) == "access-token")
        #expect(text(read.refreshToken) == "refresh-token")
        #expect(text(read.idToken) == "a.b.c")
        #expect(read.tokenType == "DPoP")
        #expect(read.scopes == ["openid", "profile", "offline_access"])
        #expect(read.accessTokenExpiresAt == session.accessTokenExpiresAt)
        #expect(read.refreshTokenExpiresAt == session.refreshTokenExpiresAt)
        #expect(read.absoluteExpiresAt == session.absoluteExpiresAt)
        #expect(read.issuedAt == session.issuedAt)
        #expect(read.signedInAt == session.signedInAt)
        #expect(read.lastRefreshedAt == session.lastRefreshedAt)
        #expect(read.userID == "user-é-42")
        #expect(read.provider == session.provider)
        #expect(text(read.provider.clientSecret) == "s3cret")
        #expect(read.provider.clientAuthentication == .post)
        #expect(read.provider.revocationEndpoint == revocationEndpoint)
        #expect(read.loginID == Array(0..<16))
    }

    @Test func optionalFieldsLeftOutStayNil() throws {
        var session = try everyField()
        session.refreshToken = nil
        session.idToken = nil
        session.scopes = []
        session.accessTokenExpiresAt = nil
        session.refreshTokenExpiresAt = nil
        session.absoluteExpiresAt = nil
        session.lastRefreshedAt = nil
        session.userID = nil
        session.provider = try testProvider(revocation: false, secret: nil)
        let read = try LoginSession(sealedRecord: session.sealedRecord())
        #expect(read.refreshToken == nil)
        #expect(read.idToken == nil)
        #expect(read.scopes.isEmpty)
        #expect(read.accessTokenExpiresAt == nil)
        #expect(read.refreshTokenExpiresAt == nil)
        #expect(read.absoluteExpiresAt == nil)
        #expect(read.lastRefreshedAt == nil)
        #expect(read.userID == nil)
        #expect(read.provider.revocationEndpoint == nil)
        #expect(read.provider.clientSecret == nil)
        #expect(read.effectiveAccessTokenExpiry == session.issuedAt.addingTimeInterval(LoginSession.assumedAccessTokenLifetime))
    }

    /// Every prefix of a record is refused with a clear error, never read as a login and never a crash.
    @Test func everyTruncationIsAClearError() throws {
        let record = try everyField().sealedRecord().withUnsafeBytes { Array($0) }
        for length in 0..<record.count {
            let error = vaultError { _ = try LoginSession(sealedRecord: SecureBytes(copying: record[0..<length])) }
            let expected: VaultError.Code = length < 4 ? .unsupportedFormat : .integrityFailure
            #expect(error?.code == expected, "prefix of \(length) bytes")
        }
    }

    @Test func aLengthPointingPastTheEndIsAnIntegrityFailure() throws {
        var record = try everyField().sealedRecord().withUnsafeBytes { Array($0) }
        record[5] = 0xFF  // the high byte of the first field's length
        #expect(vaultError { _ = try LoginSession(sealedRecord: SecureBytes(copying: record)) }?.code == .integrityFailure)
    }

    @Test func aWrongMagicIsAnUnsupportedFormat() throws {
        var record = try everyField().sealedRecord().withUnsafeBytes { Array($0) }
        record[3] = UInt8(ascii: "9")
        let error = vaultError { _ = try LoginSession(sealedRecord: SecureBytes(copying: record)) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.reason.contains("update sortedvault") == true)
    }

    @Test func aQueuedRevocationIsNotReadAsALogin() throws {
        let session = try everyField()
        let revocation = QueuedRevocation(for: session, login: try ItemKey(service: "s", account: "a"), at: session.issuedAt)
        #expect(vaultError { _ = try LoginSession(sealedRecord: revocation.sealedRecord()) }?.code == .unsupportedFormat)
    }

    @Test func aQueuedRevocationRoundTrips() throws {
        let session = try everyField()
        let login = try ItemKey(service: "com.sorted.app", account: "ada")
        let revocation = QueuedRevocation(for: session, login: login, at: session.issuedAt)
        let read = try QueuedRevocation(id: revocation.id, sealedRecord: revocation.sealedRecord())
        #expect(read.login == login)
        #expect(read.loginID == session.loginID)
        #expect(text(read.accessToken) == "access-token")
        #expect(text(read.refreshToken) == "refresh-token")
        #expect(read.provider == session.provider)
        #expect(read.queuedAt == session.issuedAt)
    }

    @Test func descriptionNeverShowsSecrets() throws {
        let session = try everyField()
        for shown in ["\(session)", "\(session.provider)"] {
            #expect(!shown.contains("access-token"))
            #expect(!shown.contains("refresh-token"))
            #expect(!shown.contains("s3cret"))
        }
    }
}
