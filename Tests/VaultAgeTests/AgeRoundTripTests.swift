import Testing
import VaultCrypto
@testable import VaultAge

@Suite(.timeLimit(.minutes(20))) struct AgeRoundTripTests {
    /// Sizes around the 64 KiB chunk: empty, short, one byte under, exactly one and two chunks, over.
    static let sizes = [0, 1, 65535, 65536, 65537, 131072, 200_000]

    @Test(arguments: sizes)
    func x25519FilesOpenWithTheIdentity(size: Int) throws {
        let identity = AgeIdentity.generateX25519()
        let plaintext = SecureRandom.bytes(count: size)
        let file = try AgeEncryptor(recipients: [try #require(identity.recipient)]).seal(plaintext)
        #expect(file.count == Self.headerLength(file) + AgeStream.sealedCount(plaintextCount: size))
        #expect(try AgeDecryptor(identities: [identity]).open(file).constantTimeEquals(plaintext))
    }

    @Test(arguments: sizes)
    func passphraseFilesOpenWithThePassphrase(size: Int) throws {
        let plaintext = SecureRandom.bytes(count: size)
        let file = try AgeEncryptor(recipients: [TestScrypt.recipient("correct horse")]).seal(plaintext)
        #expect(try TestScrypt.decryptor("correct horse").open(file).constantTimeEquals(plaintext))
    }

    @Test func armoredFilesOpenAndAreStrictPEM() throws {
        let identity = AgeIdentity.generateX25519()
        let plaintext = SecureRandom.bytes(count: 1000)
        let file = try AgeEncryptor(recipients: [try #require(identity.recipient)]).seal(plaintext, armored: true)
        let lines = String(decoding: file, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "-----BEGIN AGE ENCRYPTED FILE-----")
        #expect(lines.dropLast().last == "-----END AGE ENCRYPTED FILE-----" && lines.last == "")
        #expect(lines.dropFirst().dropLast(3).allSatisfy { $0.count == 64 })
        #expect(try AgeDecryptor(identities: [identity]).open(file).constantTimeEquals(plaintext))
    }

    @Test func everyRecipientOfAFileCanOpenIt() throws {
        let identities = (0..<3).map { _ in AgeIdentity.generateX25519() }
        let file = try AgeEncryptor(recipients: identities.map { $0.recipient! }).seal(Array("shared".utf8))
        for identity in identities {
            #expect(try AgeDecryptor(identities: [identity]).open(file).constantTimeEquals(Array("shared".utf8)))
        }
        // An identity that is not a recipient is tried and passed over.
        let stranger = AgeIdentity.generateX25519()
        #expect(try AgeDecryptor(identities: [stranger, identities[2]]).open(file).constantTimeEquals(Array("shared".utf8)))
    }

    @Test func theHeaderIsCanonicalAge() throws {
        let identity = AgeIdentity.generateX25519()
        let file = try AgeEncryptor(recipients: [identity.recipient!, identity.recipient!]).seal([1, 2, 3])
        let header = try file.withUnsafeBytes { try AgeHeader.parse($0) }
        let text = String(decoding: file[0..<header.payloadOffset], as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.first == "age-encryption.org/v1")
        #expect(lines.filter { $0.hasPrefix("-> X25519 ") }.count == 2)
        #expect(lines.last?.hasPrefix("--- ") == true && lines.last?.count == 47)
        #expect(!text.contains("="))
        // Re-encoding the parsed stanzas gives the very bytes the MAC covers.
        #expect(AgeHeader.macInput(for: header.stanzas) == header.macInput)
    }

    @Test func sealingTwiceGivesUnrelatedFiles() throws {
        let recipient = try #require(AgeIdentity.generateX25519().recipient)
        let sealer = try AgeEncryptor(recipients: [recipient])
        let a = try sealer.seal([UInt8](repeating: 7, count: 100)), b = try sealer.seal([UInt8](repeating: 7, count: 100))
        #expect(a != b && a.count == b.count)
    }

    @Test func recipientsAndIdentitiesDescribeThemselvesWithoutSecrets() throws {
        let passphrase = "hunter2-very-secret"
        let recipient = try TestScrypt.recipient(passphrase)
        #expect(recipient.description == "scrypt (work factor 10)")
        #expect(AgeIdentity.scrypt(passphrase: TestScrypt.passphrase(passphrase)).description == "passphrase")
        let identity = AgeIdentity.generateX25519()
        let secret = String(decoding: try #require(identity.secretKeyText()).withUnsafeBytes { Array($0) }, as: UTF8.self)
        #expect(secret.hasPrefix("AGE-SECRET-KEY-1") && secret.count == 74)
        #expect(identity.description == "X25519 identity for \(identity.recipient!)")
        #expect(!identity.description.contains(secret))
    }

    static func headerLength(_ file: [UInt8]) -> Int {
        (try? file.withUnsafeBytes { try AgeHeader.parse($0) }.payloadOffset) ?? 0
    }
}
