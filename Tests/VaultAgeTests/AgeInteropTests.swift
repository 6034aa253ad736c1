import Foundation
import TestSupport
import Testing
import VaultCrypto
@testable import VaultAge

/// Files go both ways between VaultAge and Debian's age 1.1.1: X25519 and passphrase, binary and
/// armored. Under CI a missing `age` fails these tests instead of skipping them.
@Suite(.timeLimit(.minutes(20)), .enabled(if: CIRequirement.runs(where: AgeTool.available), Comment(rawValue: AgeTool.missing)))
struct AgeInteropTests {
    let tool: AgeTool
    let plaintext = SecureRandom.bytes(count: 150_000)  // three chunks, the last one short

    init() throws {
        try CIRequirement.require(AgeTool.available, AgeTool.missing)
        tool = try AgeTool()
    }

    @Test(arguments: [false, true])
    func ageOpensAVaultAgeFileWithAnIdentityFile(armored: Bool) throws {
        let identity = AgeIdentity.generateX25519()
        let secret = try #require(identity.secretKeyText())
        try secret.withUnsafeBytes { try tool.write(Array($0) + [0x0A], to: "key.txt") }
        try tool.write(try AgeEncryptor(recipients: [identity.recipient!]).seal(plaintext, armored: armored), to: "file.age")
        try tool.run([AgeTool.age, "-d", "-i", tool.path("key.txt"), "-o", tool.path("out"), tool.path("file.age")])
        #expect(try tool.read("out") == plaintext)
    }

    @Test func ageOpensAVaultAgePassphraseFileAtItsPrompt() throws {
        let passphrase = TestScrypt.passphrase("interop passphrase \(UUID().uuidString.prefix(6))")
        let file = try AgeEncryptor(recipients: [.scrypt(passphrase: passphrase, workFactor: TestScrypt.workFactor)]).seal(plaintext)
        try tool.write(file, to: "file.age")
        let run = try tool.runAtTerminal([AgeTool.age, "-d", "-o", tool.path("out"), tool.path("file.age")], typing: passphrase, prompts: 1)
        #expect(run.status == 0, "age -d: \(run.screen)")
        #expect(try tool.read("out") == plaintext)
    }

    @Test func ageRefusesAVaultAgePassphraseFileWithAnotherPassphrase() throws {
        let file = try AgeEncryptor(recipients: [TestScrypt.recipient("the right one")]).seal(plaintext)
        try tool.write(file, to: "file.age")
        let run = try tool.runAtTerminal([AgeTool.age, "-d", "-o", tool.path("out"), tool.path("file.age")],
                                         typing: TestScrypt.passphrase("the wrong one"), prompts: 1)
        #expect(run.status != 0)
        #expect(run.screen.contains("incorrect passphrase"), "age -d: \(run.screen)")
    }

    @Test(arguments: [false, true])
    func vaultAgeOpensAnAgeFileForAnAgeKeygenKey(armored: Bool) throws {
        try tool.run([AgeTool.keygen, "-o", tool.path("key.txt")])
        let recipient = try tool.run([AgeTool.keygen, "-y", tool.path("key.txt")]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        try tool.write(plaintext, to: "plain")
        try tool.run([AgeTool.age, "-e", "-r", recipient] + (armored ? ["-a"] : []) + ["-o", tool.path("file.age"), tool.path("plain")])
        let identity = try Self.identity(fromKeyFile: tool.read("key.txt"))
        #expect(identity.recipient?.description == recipient)
        #expect(try AgeDecryptor(identities: [identity]).open(tool.read("file.age")).constantTimeEquals(plaintext))
    }

    /// age's own passphrase file, at age's default work factor (18), opens under the default maximum.
    @Test func vaultAgeOpensAnAgePassphraseFile() throws {
        let passphrase = TestScrypt.passphrase("typed into age \(UUID().uuidString.prefix(6))")
        try tool.write(plaintext, to: "plain")
        let run = try tool.runAtTerminal([AgeTool.age, "-p", "-o", tool.path("file.age"), tool.path("plain")], typing: passphrase, prompts: 2)
        #expect(run.status == 0, "age -p: \(run.screen)")
        let file = try tool.read("file.age")
        let header = try file.withUnsafeBytes { try AgeHeader.parse($0) }
        #expect(header.stanzas.map(\.type) == ["scrypt"] && header.stanzas.first?.arguments.last == "18")
        #expect(try AgeDecryptor(identities: [.scrypt(passphrase: passphrase)]).open(file).constantTimeEquals(plaintext))
        #expect(throws: AgeError(.wrongPassphrase, "")) {
            try AgeDecryptor(identities: [.scrypt(passphrase: TestScrypt.passphrase("not it"))]).open(file)
        }
    }

    @Test func aTamperedAgeFileIsRefused() throws {
        try tool.run([AgeTool.keygen, "-o", tool.path("key.txt")])
        let recipient = try tool.run([AgeTool.keygen, "-y", tool.path("key.txt")]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        try tool.write(plaintext, to: "plain")
        try tool.run([AgeTool.age, "-e", "-r", recipient, "-o", tool.path("file.age"), tool.path("plain")])
        var file = try tool.read("file.age")
        file[file.count - 1000] ^= 0x20
        let decryptor = AgeDecryptor(identities: [try Self.identity(fromKeyFile: tool.read("key.txt"))])
        #expect(throws: AgeError(.tamperedPayload, "")) { try decryptor.open(file) }
        // Cut after the second of three chunks: the header, the nonce and two sealed chunks remain.
        let payloadStart = file.count - AgeStream.sealedCount(plaintextCount: plaintext.count) + AgeStream.nonceCount
        #expect(throws: AgeError(.truncatedPayload, "")) {
            try decryptor.open(Array(file[0..<(payloadStart + 2 * AgeStream.sealedChunkSize)]))
        }
    }

    /// The `AGE-SECRET-KEY-1…` line of an age-keygen file, read without making a String of it.
    static func identity(fromKeyFile bytes: [UInt8]) throws -> AgeIdentity {
        var bytes = bytes
        defer { wipe(&bytes) }
        let prefix = Array("AGE-SECRET-KEY-1".utf8)
        let start = try #require(bytes.indices.first { bytes[$0...].starts(with: prefix) })
        let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.endIndex
        return try AgeIdentity.x25519(secretKey: SecureBytes(copying: bytes[start..<end]))
    }
}
