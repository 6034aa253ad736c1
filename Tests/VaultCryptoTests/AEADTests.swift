import Testing
import VaultCrypto

@Suite(.timeLimit(.minutes(20))) struct AEADTests {
    let key = SecureBytes(randomCount: AEAD.keyCount)
    let identity: [UInt8] = Array("row 7 | generation 3 | key 1".utf8)

    @Test(arguments: [0, 1, 64, 256 * 1024])
    func roundTrips(size: Int) throws {
        let message = SecureRandom.bytes(count: size)
        let sealed = try AEAD.seal(SecureBytes(copying: message), key: key, associatedData: identity)
        #expect(sealed.count == size + AEAD.overhead)
        #expect(try AEAD.open(sealed, key: key, associatedData: identity).constantTimeEquals(message))
    }

    @Test func everySealUsesAFreshNonce() throws {
        let a = try AEAD.seal(SecureBytes(copying: [1, 2, 3]), key: key, associatedData: identity)
        let b = try AEAD.seal(SecureBytes(copying: [1, 2, 3]), key: key, associatedData: identity)
        #expect(a.prefix(AEAD.nonceCount) != b.prefix(AEAD.nonceCount))
    }

    @Test func otherAssociatedDataFailsToOpen() throws {
        let sealed = try AEAD.seal(SecureBytes(copying: Array("token".utf8)), key: key, associatedData: identity)
        for other in [Array("row 7 | generation 2 | key 1".utf8), [], identity + [0]] {
            #expect(throws: CryptoError.authenticationFailure) { try AEAD.open(sealed, key: key, associatedData: other) }
        }
    }

    @Test func flippingAnyByteFailsToOpen() throws {
        let sealed = try AEAD.seal(SecureBytes(copying: Array("token".utf8)), key: key, associatedData: identity)
        for index in sealed.indices {
            var damaged = sealed
            damaged[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailure) { try AEAD.open(damaged, key: key, associatedData: identity) }
        }
    }

    @Test func wrongKeyShortInputAndBadKeyLengthFail() throws {
        let sealed = try AEAD.seal(SecureBytes(copying: [1]), key: key, associatedData: identity)
        #expect(throws: CryptoError.authenticationFailure) {
            try AEAD.open(sealed, key: SecureBytes(randomCount: AEAD.keyCount), associatedData: identity)
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try AEAD.open([UInt8](repeating: 0, count: AEAD.overhead - 1), key: key, associatedData: identity)
        }
        #expect(throws: CryptoError.invalidLength(expected: 32, actual: 16)) {
            try AEAD.seal(SecureBytes(copying: [1]), key: SecureBytes(randomCount: 16), associatedData: identity)
        }
    }
}
