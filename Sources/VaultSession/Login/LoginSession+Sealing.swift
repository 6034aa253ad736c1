import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Field tags of the stored session record. Append only; never reuse a number.
enum SessionField {
    static let accessToken: UInt8 = 1
    static let refreshToken: UInt8 = 2
    static let idToken: UInt8 = 3
    static let tokenType: UInt8 = 4
    static let scopes: UInt8 = 5
    static let accessTokenExpiresAt: UInt8 = 6
    static let refreshTokenExpiresAt: UInt8 = 7
    static let absoluteExpiresAt: UInt8 = 8
    static let issuedAt: UInt8 = 9
    static let signedInAt: UInt8 = 10
    static let userID: UInt8 = 11
    static let tokenEndpoint: UInt8 = 12
    static let revocationEndpoint: UInt8 = 13
    static let clientID: UInt8 = 14
    static let clientSecret: UInt8 = 15
    static let clientAuthentication: UInt8 = 16
    static let loginID: UInt8 = 17
    static let lastRefreshedAt: UInt8 = 18
    static let service: UInt8 = 19
    static let account: UInt8 = 20
    /// Absent in records written before provider kinds: those are `oauth2`.
    static let providerKind: UInt8 = 21
    static let apiKey: UInt8 = 22
    static let issuer: UInt8 = 23
}

extension LoginSession {
    /// "SVS1": sortedvault session, record version 1.
    static let magic: [UInt8] = Array("SVS1".utf8)

    /// The session as the secret of its vault item.
    func sealedRecord() -> SecureBytes {
        var writer = SealedFieldsWriter(magic: Self.magic)
        writer.secret(SessionField.accessToken, accessToken)
        writer.secret(SessionField.refreshToken, refreshToken)
        writer.secret(SessionField.idToken, idToken)
        writer.text(SessionField.tokenType, tokenType)
        writer.text(SessionField.scopes, scopes.joined(separator: " "))
        writer.date(SessionField.accessTokenExpiresAt, accessTokenExpiresAt)
        writer.date(SessionField.refreshTokenExpiresAt, refreshTokenExpiresAt)
        writer.date(SessionField.absoluteExpiresAt, absoluteExpiresAt)
        writer.date(SessionField.issuedAt, issuedAt)
        writer.date(SessionField.signedInAt, signedInAt)
        writer.date(SessionField.lastRefreshedAt, lastRefreshedAt)
        writer.text(SessionField.userID, userID)
        writer.bytes(SessionField.loginID, loginID)
        provider.write(into: &writer)
        return writer.finish()
    }

    /// Reads a session record; a damaged one is an integrity failure.
    public init(sealedRecord record: SecureBytes) throws {
        let reader = try SealedFieldsReader(record, magic: Self.magic, what: "session")
        guard let accessToken = reader.secret(SessionField.accessToken), let tokenType = reader.text(SessionField.tokenType),
              let issuedAt = reader.date(SessionField.issuedAt), let signedInAt = reader.date(SessionField.signedInAt),
              let loginID = reader.bytes(SessionField.loginID) else {
            throw SealedFieldsReader.damaged("session")
        }
        self.init(
            accessToken: accessToken, refreshToken: reader.secret(SessionField.refreshToken),
            idToken: reader.secret(SessionField.idToken), tokenType: tokenType,
            scopes: (reader.text(SessionField.scopes) ?? "").split(separator: " ").map(String.init),
            accessTokenExpiresAt: reader.date(SessionField.accessTokenExpiresAt),
            refreshTokenExpiresAt: reader.date(SessionField.refreshTokenExpiresAt),
            absoluteExpiresAt: reader.date(SessionField.absoluteExpiresAt), issuedAt: issuedAt, signedInAt: signedInAt,
            lastRefreshedAt: reader.date(SessionField.lastRefreshedAt), userID: reader.text(SessionField.userID),
            provider: try OAuthProvider(reading: reader), loginID: loginID)
    }
}

extension OAuthProvider {
    func write(into writer: inout SealedFieldsWriter) {
        // The optional fields first: a record cut off anywhere still lacks a required field.
        writer.text(SessionField.providerKind, kind.rawValue)
        writer.secret(SessionField.apiKey, apiKey)
        writer.text(SessionField.issuer, issuer?.absoluteString)
        writer.text(SessionField.tokenEndpoint, tokenEndpoint.absoluteString)
        writer.text(SessionField.revocationEndpoint, revocationEndpoint?.absoluteString)
        writer.text(SessionField.clientID, clientID)
        writer.secret(SessionField.clientSecret, clientSecret)
        writer.text(SessionField.clientAuthentication, clientAuthentication.rawValue)
    }

    init(reading reader: SealedFieldsReader) throws {
        var kind = ProviderKind.oauth2
        if let text = reader.text(SessionField.providerKind) {
            guard let known = ProviderKind(rawValue: text) else {
                throw VaultError(.unsupportedFormat, "a stored login uses a provider kind this build does not know; update sortedvault")
            }
            kind = known
        }
        guard let tokenEndpoint = reader.text(SessionField.tokenEndpoint).flatMap(URL.init(string:)),
              let clientID = reader.text(SessionField.clientID),
              let authentication = reader.text(SessionField.clientAuthentication).flatMap(ClientAuthentication.init(rawValue:)) else {
            throw SealedFieldsReader.damaged("session")
        }
        try self.init(kind: kind, tokenEndpoint: tokenEndpoint,
                      revocationEndpoint: reader.text(SessionField.revocationEndpoint).flatMap(URL.init(string:)),
                      clientID: clientID, clientSecret: reader.secret(SessionField.clientSecret),
                      clientAuthentication: authentication, apiKey: reader.secret(SessionField.apiKey),
                      issuer: reader.text(SessionField.issuer).flatMap(URL.init(string:)))
    }
}
