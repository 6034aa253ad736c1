import Testing
import VaultAPI
import VaultCrypto

/// The backup's plaintext (docs/backup.md): what the writer writes the reader reads back, and a
/// document that is not the format is refused by line number, never with its contents.
@Suite(.timeLimit(.minutes(5))) struct BackupDocumentTests {
    static let secret = SecureBytes(copying: Array("tok+/=\u{0}\"\\".utf8) + [0xFF])
    static let item = VaultInterface.Item(service: "git:https://x", account: "ada", label: "l", attributes: ["k": "v"], created: 1, modified: 2)
    static let login = SessionInterface.BackupLogin(
        service: "app", account: "ada",
        provider: .init(kind: "oauth2", tokenEndpoint: "https://id/token", clientId: "c", clientSecret: SecureBytes(copying: [1, 2])),
        accessToken: secret, refreshToken: SecureBytes(copying: Array("refresh-secret".utf8)), idToken: nil, tokenType: "Bearer",
        scopes: ["read"], accessTokenExpiresAt: 100, refreshTokenExpiresAt: nil, absoluteExpiresAt: nil, issuedAt: 1, signedInAt: 1,
        lastRefreshedAt: nil, userId: "u")

    static func document(items: Int64 = 1, logins: Int64 = 1, format: String = BackupDocument.format, version: Int64 = BackupDocument.version) -> SecureBytes {
        var writer = BackupDocument.Writer(header: .init(format: format, version: version, created: 5, items: items, logins: logins))
        writer.item(item, secret: secret)
        writer.login(login)
        return writer.finish().withUnsafeBytes { SecureBytes(copying: $0) }
    }

    @Test func whatIsWrittenReadsBack() throws {
        let read = try BackupDocument(plaintext: Self.document())
        #expect(read.header.items == 1 && read.header.logins == 1 && read.header.created == 5)
        #expect(read.lines.count == 2)
        guard case .item(let item, let secret) = read.lines[0], case .login(let login) = read.lines[1] else {
            Issue.record("the lines came back in another order or kind")
            return
        }
        #expect(item == Self.item && secret == Self.secret)
        #expect(login.refreshToken == Self.login.refreshToken && login.provider.clientSecret == Self.login.provider.clientSecret)
        #expect(login.accessToken == Self.secret && login.scopes == ["read"] && login.userId == "u")
    }

    @Test func eachLineIsOneJSONObject() throws {
        let text = Self.document().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines[3].isEmpty, "three lines, each ended by a newline")
        #expect(lines[0].hasPrefix("{\"format\":\"org.sortedvault.backup\",\"version\":1,"))
        #expect(lines[1].hasPrefix("{\"item\":{") && lines[2].hasPrefix("{\"login\":{"))
    }

    @Test func countsThatDoNotMatchAreRefused() {
        #expect(throws: BackupFormatError.self) { try BackupDocument(plaintext: Self.document(items: 2)) }
        #expect(throws: BackupFormatError.self) { try BackupDocument(plaintext: Self.document(logins: 0)) }
    }

    @Test func anotherFormatOrVersionIsRefused() {
        #expect { try BackupDocument(plaintext: Self.document(format: "org.other")) } throws: {
            ($0 as? BackupFormatError)?.line == 1 && "\($0)".contains("does not start a sortedvault backup")
        }
        #expect { try BackupDocument(plaintext: Self.document(version: 2)) } throws: {
            "\($0)".contains("version 2") && "\($0)".contains("update it")
        }
        #expect(throws: BackupFormatError.self) { try BackupDocument(plaintext: SecureBytes(copying: [])) }
    }

    /// A broken line is named by number; the error holds none of the document's secrets.
    @Test func aBrokenLineIsNamedWithoutItsContents() {
        var text = Self.document().withUnsafeBytes { Array($0) }
        let second = text.firstIndex(of: 0x0A)! + 1
        text.insert(contentsOf: Array("refresh-secret,".utf8), at: second + 1)
        #expect { try BackupDocument(plaintext: SecureBytes(copying: text)) } throws: {
            let message = "\($0)"
            return ($0 as? BackupFormatError)?.line == 2 && !message.contains("refresh-secret") && !message.contains("tok")
        }
    }
}
