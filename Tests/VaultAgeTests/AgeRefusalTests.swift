import Testing
import VaultCrypto
@testable import VaultAge

/// Changed, cut and extended files, wrong keys and costly files are refused with the error that
/// names what is wrong, and no error text holds a secret.
@Suite(.timeLimit(.minutes(20))) struct AgeRefusalTests {
    let identity = AgeIdentity.generateX25519()
    var decryptor: AgeDecryptor { AgeDecryptor(identities: [identity]) }

    /// Two full chunks and a short one.
    func sealed(_ size: Int = 2 * 65536 + 100) throws -> [UInt8] {
        try AgeEncryptor(recipients: [identity.recipient!]).seal(SecureRandom.bytes(count: size))
    }

    func payloadOffset(_ file: [UInt8]) throws -> Int {
        try file.withUnsafeBytes { try AgeHeader.parse($0) }.payloadOffset
    }

    @Test func aChangedStanzaArgumentOrMACIsAHeaderFailure() throws {
        let file = try sealed()
        let text = String(decoding: file[0..<(try payloadOffset(file))], as: UTF8.self)
        // A different, still canonical, character in the MAC: the MAC no longer matches.
        let macStart = try #require(text.range(of: "\n--- ")).upperBound.utf16Offset(in: text)
        var changedMAC = file
        changedMAC[macStart] = changedMAC[macStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: AgeError(.headerMACMismatch, "")) { try decryptor.open(changedMAC) }
        // A header line with a trailing space is not the v1 grammar at all.
        var spaced = file
        spaced.insert(0x20, at: macStart - 5)
        #expect(throws: AgeError(.malformedHeader, "")) { try decryptor.open(spaced) }
    }

    @Test func anAddedStanzaBreaksTheMAC() throws {
        let file = try sealed(10)
        let offset = try #require(file.firstIndex(of: 0x0A)) + 1
        var extended = file
        extended.insert(contentsOf: Array("-> extra-stanza\n\n".utf8), at: offset)
        #expect(throws: AgeError(.headerMACMismatch, "")) { try decryptor.open(extended) }
    }

    @Test func aChangedPayloadByteIsATamperedChunk() throws {
        let file = try sealed()
        let start = try payloadOffset(file)
        for index in [start, start + 16, start + 16 + 70_000, file.count - 1] {
            var changed = file
            changed[index] ^= 0x01
            let error = try #require(throws: AgeError.self) { try decryptor.open(changed) }
            // The nonce is part of the payload key: changing it breaks the first chunk too.
            #expect(error.code == .tamperedPayload, "byte \(index - start) of the payload")
        }
    }

    @Test func aFileCutAtAChunkBoundaryIsTruncated() throws {
        let file = try sealed()
        let start = try payloadOffset(file)
        for chunks in [0, 1, 2] {
            let cut = Array(file[0..<(start + 16 + chunks * AgeStream.sealedChunkSize)])
            let error = try #require(throws: AgeError.self) { try decryptor.open(cut) }
            #expect(error.code == .truncatedPayload, "cut after \(chunks) chunks: \(error.reason)")
        }
        let inNonce = Array(file[0..<(start + 7)])
        #expect(throws: AgeError(.truncatedPayload, "")) { try decryptor.open(inNonce) }
    }

    @Test func aFileCutInsideAChunkDoesNotAuthenticate() throws {
        let file = try sealed()
        for drop in [1, 16, 99, 117] {
            let error = try #require(throws: AgeError.self) { try decryptor.open(Array(file.dropLast(drop))) }
            #expect(error.code == .tamperedPayload && error.reason.contains("cut"))
        }
    }

    @Test func bytesAfterAFullFinalChunkAreTrailingData() throws {
        let file = try sealed(65536)  // one full, final chunk
        #expect(throws: AgeError(.trailingData, "")) { try decryptor.open(file + [0]) }
    }

    @Test func aWrongPassphraseOrKeyIsNamed() throws {
        let file = try AgeEncryptor(recipients: [TestScrypt.recipient("right passphrase")]).seal([1, 2, 3])
        let error = try #require(throws: AgeError.self) { try TestScrypt.decryptor("wrong passphrase").open(file) }
        #expect(error.code == .wrongPassphrase)
        #expect(!error.reason.contains("passphrase\"") && !error.description.contains("wrong passphrase"))
        // A second passphrase in the list is still tried.
        let both = AgeDecryptor(identities: [.scrypt(passphrase: TestScrypt.passphrase("wrong passphrase")),
                                             .scrypt(passphrase: TestScrypt.passphrase("right passphrase"))],
                                maximumWorkFactor: TestScrypt.workFactor)
        #expect(try both.open(file).constantTimeEquals([1, 2, 3]))
        // An X25519 key on a passphrase file, and a stranger's key on an X25519 file, match nothing.
        #expect(throws: AgeError(.noIdentityMatched, "")) { try decryptor.open(file) }
        #expect(throws: AgeError(.noIdentityMatched, "")) {
            try AgeDecryptor(identities: [.generateX25519()]).open(try sealed(10))
        }
    }

    @Test func aWorkFactorAboveTheMaximumIsRefusedBeforeAnyWork() throws {
        let file = try AgeEncryptor(recipients: [TestScrypt.recipient("p")]).seal([1])
        let strict = AgeDecryptor(identities: [.scrypt(passphrase: TestScrypt.passphrase("p"))], maximumWorkFactor: 9)
        let error = try #require(throws: AgeError.self) { try strict.open(file) }
        #expect(error.code == .workFactorTooHigh && error.reason.contains("10") && error.reason.contains("9"))
    }

    @Test func scryptCannotBeMixedWithOtherRecipients() throws {
        #expect(throws: AgeError(.invalidRecipient, "")) {
            try AgeEncryptor(recipients: [TestScrypt.recipient("p"), identity.recipient!])
        }
        #expect(throws: AgeError(.invalidRecipient, "")) { try AgeEncryptor(recipients: []) }
        #expect(throws: AgeError(.invalidRecipient, "")) {
            try AgeRecipient.scrypt(passphrase: TestScrypt.passphrase("p"), workFactor: 23)
        }
    }

    @Test func aLowOrderRecipientIsRefusedWhenSealing() throws {
        let zeroPoint = [UInt8](repeating: 0, count: 32).withUnsafeBytes { Bech32.encode(hrp: "age", data: $0) }
        let recipient = try AgeRecipient.x25519(String(decoding: zeroPoint, as: UTF8.self))
        #expect(throws: AgeError(.invalidRecipient, "")) { try AgeEncryptor(recipients: [recipient]).seal([1]) }
    }

    @Test func headersBeyondTheParsingBoundsAreRefused() throws {
        let mac = "--- " + String(repeating: "A", count: 43) + "\n"
        let manyStanzas = "age-encryption.org/v1\n" + String(repeating: "-> x\n\n", count: 257) + mac
        let longArgument = "age-encryption.org/v1\n-> " + String(repeating: "a", count: 5000) + "\n\n" + mac
        for header in [manyStanzas, longArgument] {
            let error = try #require(throws: AgeError.self) { try decryptor.open(Array(header.utf8)) }
            #expect(error.code == .malformedHeader, "\(error.reason)")
        }
    }

    @Test func noErrorTextHoldsTheSecretsInvolved() throws {
        let passphrase = "Zebra-Quartz-7781"
        let file = try AgeEncryptor(recipients: [TestScrypt.recipient(passphrase)]).seal(Array("plain-marker".utf8))
        var errors: [AgeError] = []
        for candidate in ["x" + passphrase, passphrase + "\n"] {
            do { _ = try TestScrypt.decryptor(candidate).open(file) } catch let error as AgeError { errors.append(error) }
        }
        var damaged = file
        damaged[damaged.count - 1] ^= 1
        do { _ = try TestScrypt.decryptor(passphrase).open(damaged) } catch let error as AgeError { errors.append(error) }
        let secret = try #require(identity.secretKeyText()).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        var broken = Array(secret.utf8)
        broken[20] = broken[20] == UInt8(ascii: "Q") ? UInt8(ascii: "P") : UInt8(ascii: "Q")
        do { _ = try AgeIdentity.x25519(secretKey: SecureBytes(copying: broken)) } catch let error as AgeError { errors.append(error) }
        #expect(errors.count == 4)
        for error in errors {
            for secretText in [passphrase, "plain-marker", String(secret.dropFirst(16).prefix(20))] {
                #expect(!error.description.contains(secretText) && !error.reason.contains(secretText))
            }
        }
    }
}
