import Testing
import VaultCrypto

@Suite struct SecureBytesTests {
    @Test func copiesAndExposesBytesOnlyInsideTheClosure() {
        let bytes = SecureBytes(copying: [1, 2, 3])
        #expect(bytes.count == 3)
        #expect(bytes.withUnsafeBytes { Array($0) } == [1, 2, 3])
    }

    @Test func equalityComparesContentsAndLength() {
        #expect(SecureBytes(copying: [1, 2, 3]) == SecureBytes(copying: [1, 2, 3]))
        #expect(SecureBytes(copying: [1, 2, 3]) != SecureBytes(copying: [1, 2, 4]))
        #expect(SecureBytes(copying: [1, 2]) != SecureBytes(copying: [1, 2, 3]))
        #expect(SecureBytes(copying: []) == SecureBytes(copying: []))
    }

    @Test func descriptionNeverShowsTheSecret() {
        let secret = SecureBytes(copying: Array("hunter2-secret".utf8))
        for text in [secret.description, secret.debugDescription, "\(secret)", String(reflecting: secret)] {
            #expect(!text.contains("hunter2"))
            #expect(text.contains("redacted"))
        }
    }

    @Test func randomBytesDiffer() {
        #expect(SecureBytes(randomCount: 32) != SecureBytes(randomCount: 32))
    }

    @Test func emptySecretIsUsable() {
        let empty = SecureBytes(copying: [UInt8]())
        #expect(empty.count == 0)
        #expect(empty.withUnsafeBytes { $0.count } == 0)
    }
}
