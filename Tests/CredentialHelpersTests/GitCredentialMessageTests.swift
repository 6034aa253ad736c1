import Testing
import VaultCrypto
@testable import CredentialHelpers

/// git's `key=value` protocol: what is read, and what is refused (CVE-2020-5260 class).
@Suite(.timeLimit(.minutes(20))) struct GitCredentialMessageTests {
    static func parse(_ text: String) throws -> GitCredentialMessage {
        try GitCredentialMessage.parse(SecureBytes(copying: Array(text.utf8)))
    }

    @Test func fieldsAreReadUntilTheBlankLineAndUnknownKeysAreIgnored() throws {
        let message = try Self.parse("protocol=https\nhost=git.example.com:8443\npath=team/repo.git\nwwwauth[]=Basic\nusername=ada\npassword=p=w\n\nhost=ignored\n")
        #expect(message.protocolName == "https")
        #expect(message.host == "git.example.com:8443")
        #expect(message.path == "team/repo.git")
        #expect(message.username == "ada")
        #expect(message.password?.withUnsafeBytes { Array($0) } == Array("p=w".utf8))
    }

    @Test func aURLIsSplitIntoItsFields() throws {
        let message = try Self.parse("url=https://ada@git.example.com/team/repo.git\n")
        #expect(message.protocolName == "https" && message.host == "git.example.com" && message.username == "ada")
        #expect(message.path == "team/repo.git")
    }

    @Test(arguments: [
        "host=a\rb\n", "host=a\u{0}b\n", "username=a\u{1B}[31m\n", "path=x\u{85}y\n",
        "url=https://git.example.com%0Ahost=evil.example/\n", "url=https://git.example.com/a%0Ab\n",
        "url=https://ada:hunter2@git.example.com/\n", "password=a\u{0}b\n", "password=a\rb\n", "hostwithoutequals\n",
    ])
    func injectionAttemptsAreRefusedWithoutQuotingASecret(input: String) {
        #expect(throws: GitCredentialError.self) { try Self.parse(input) }
        do { _ = try Self.parse(input) } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test func theAnswerRefusesAStoredPasswordThatWouldInjectALine() throws {
        #expect(throws: GitCredentialError.self) {
            try GitCredentialStore.answer(username: "ada", password: SecureBytes(copying: Array("x\nhost=evil".utf8)))
        }
        let answer = try GitCredentialStore.answer(username: "ada", password: SecureBytes(copying: Array("tok".utf8)))
        #expect(answer.withUnsafeBytes { Array($0) } == Array("username=ada\npassword=tok\n".utf8))
    }
}
