import Testing
import VaultCrypto
@testable import VaultAge

/// Every CCTV age vector in `Vectors/` (see its README): the outcome its `expect` names, and the
/// SHA-256 of the plaintext released, also when the payload fails part way.
@Suite(.timeLimit(.minutes(20))) struct CCTVVectorTests {
    /// What each `expect` may be reported as. A few vectors fail, in the reference, in a step it
    /// counts as the header and this module counts elsewhere: those are named in ``exceptions``.
    static let accepted: [String: [AgeError.Code]] = [
        "header failure": [.malformedHeader, .unsupportedVersion],
        "HMAC failure": [.headerMACMismatch],
        "no match": [.noIdentityMatched, .wrongPassphrase],
        "payload failure": [.truncatedPayload, .tamperedPayload, .trailingData],
        "armor failure": [.malformedArmor],
    ]
    static let exceptions: [String: AgeError.Code] = [
        // The reference reads the payload nonce inside Decrypt, before returning a reader.
        "stream_no_nonce": .truncatedPayload,
        "stream_short_nonce": .truncatedPayload,
        // The reference reports a work factor above its maximum as a header error.
        "scrypt_work_factor_23": .workFactorTooHigh,
        "scrypt_work_factor_overflow": .workFactorTooHigh,
    ]

    @Test func theVectorFolderHoldsEveryNonHybridVector() {
        #expect(AgeVector.names.count == 124)
    }

    @Test(arguments: AgeVector.names)
    func vectorHasItsExpectedOutcome(_ name: String) throws {
        let vector = try AgeVector(named: name)
        var identities = try vector.identities.map { try AgeIdentity.x25519(secretKey: SecureBytes(copying: Array($0.utf8))) }
        identities += vector.passphrases.map { AgeIdentity.scrypt(passphrase: SecureBytes(copying: Array($0.utf8))) }
        if identities.isEmpty { identities = [.generateX25519()] }  // a vector that fails before any key
        let decryptor = AgeDecryptor(identities: identities)

        // As the reference test does: armor is undone on its own first, then the binary file is read.
        let outcome = Self.run(vector, decryptor)
        switch outcome {
        case let .opened(plaintext):
            #expect(vector.expect == "success", "\(name) opened but expects \(vector.expect)")
            #expect(plaintext.sha256Hex == vector.payloadHash, "\(name): payload hash")
        case let .failed(error, released):
            let wanted = Self.exceptions[name].map { [$0] } ?? Self.accepted[vector.expect] ?? []
            #expect(wanted.contains(error.code), "\(name) expects \(vector.expect), got \(error.code): \(error.reason)")
            if vector.expect == "payload failure", let hash = vector.payloadHash {
                #expect(released.sha256Hex == hash, "\(name): hash of the plaintext released before the failure")
            }
        }

        // The public entry point gives the same verdict and releases nothing on failure.
        do {
            let plaintext = try decryptor.open(vector.file)
            #expect(vector.expect == "success", "\(name): open() accepted a file the vector refuses")
            #expect(plaintext.withUnsafeBytes { $0.sha256Hex } == vector.payloadHash)
        } catch let error as AgeError {
            #expect(vector.expect != "success", "\(name): open() refused with \(error.code): \(error.reason)")
            if case let .failed(expected, _) = outcome, !vector.armored || vector.expect != "armor failure" {
                #expect(error.code == expected.code, "\(name): open() says \(error.code), the step-wise run \(expected.code)")
            }
        }
    }

    enum Outcome {
        case opened([UInt8])
        case failed(AgeError, released: [UInt8])
    }

    /// Armor, header, file key and MAC, then the payload chunk by chunk, keeping what was released.
    static func run(_ vector: AgeVector, _ decryptor: AgeDecryptor) -> Outcome {
        do {
            let file = try vector.armored ? vector.file.withUnsafeBytes { try AgeArmor.decode($0) } : vector.file
            return try file.withUnsafeBytes { raw in
                let (fileKey, offset) = try decryptor.unwrapFileKey(raw)
                let payload = UnsafeRawBufferPointer(rebasing: raw[offset...])
                var plaintext = [UInt8](repeating: 0, count: AgeStream.plaintextCount(payloadCount: payload.count))
                var released = 0
                do {
                    try plaintext.withUnsafeMutableBytes { out in
                        try AgeStream.open(payload, fileKey: fileKey, into: out) { released = $0 }
                    }
                } catch let error as AgeError {
                    return .failed(error, released: Array(plaintext[0..<released]))
                }
                return .opened(plaintext)
            }
        } catch {
            return .failed(error as! AgeError, released: [])
        }
    }
}
