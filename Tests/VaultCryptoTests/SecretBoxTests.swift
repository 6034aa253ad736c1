import Foundation
import Testing
import VaultCrypto

@Suite(.timeLimit(.minutes(20))) struct SecretBoxTests {
    let key = SecureBytes(randomCount: SecretBox.keyCount)

    @Test(arguments: [0, 1, 64, 256 * 1024])
    func roundTrips(size: Int) throws {
        let message = SecureRandom.bytes(count: size)
        let sealed = try SecretBox.seal(message, key: key)
        #expect(sealed.count == size + SecretBox.overhead)
        #expect(try SecretBox.open(sealed, key: key).constantTimeEquals(message))
    }

    @Test func everySealUsesAFreshNonce() throws {
        let a = try SecretBox.seal([1, 2, 3], key: key)
        let b = try SecretBox.seal([1, 2, 3], key: key)
        #expect(a.prefix(SecretBox.nonceCount) != b.prefix(SecretBox.nonceCount))
    }

    @Test func flippingAnyByteFailsAuthentication() throws {
        let sealed = try SecretBox.seal(Array("token".utf8), key: key)
        for index in sealed.indices {
            var damaged = sealed
            damaged[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailure) { try SecretBox.open(damaged, key: key) }
        }
    }

    @Test func wrongKeyAndShortInputFail() throws {
        let sealed = try SecretBox.seal([1], key: key)
        #expect(throws: CryptoError.authenticationFailure) { try SecretBox.open(sealed, key: SecureBytes(randomCount: 32)) }
        #expect(throws: CryptoError.authenticationFailure) { try SecretBox.open([UInt8](repeating: 0, count: 10), key: key) }
        #expect(throws: CryptoError.invalidLength(expected: 32, actual: 16)) { try SecretBox.seal([1], key: SecureBytes(randomCount: 16)) }
    }
}

@Suite(.timeLimit(.minutes(20))) struct KeyedHashTests {
    let key = SecureBytes(randomCount: 32)

    @Test func isDeterministicPerKeyAndContext() {
        let a = KeyedHash.tag(key: key, context: "ctx", parts: [[1, 2]])
        #expect(a == KeyedHash.tag(key: key, context: "ctx", parts: [[1, 2]]))
        #expect(a != KeyedHash.tag(key: key, context: "other", parts: [[1, 2]]))
        #expect(a != KeyedHash.tag(key: SecureBytes(randomCount: 32), context: "ctx", parts: [[1, 2]]))
    }

    @Test func lengthPrefixingSeparatesParts() {
        let ab_c = KeyedHash.tag(key: key, context: "ctx", parts: [[UInt8]("ab".utf8), [UInt8]("c".utf8)])
        let a_bc = KeyedHash.tag(key: key, context: "ctx", parts: [[UInt8]("a".utf8), [UInt8]("bc".utf8)])
        #expect(ab_c != a_bc)
    }

    @Test func derivedKeysMatchTags() {
        let derived = KeyedHash.deriveKey(from: key, context: "ctx", parts: [[9]])
        #expect(derived.constantTimeEquals(KeyedHash.tag(key: key, context: "ctx", parts: [[9]])))
    }
}

@Suite(.timeLimit(.minutes(20))) struct PasswordHashTests {
    let salt = [UInt8](repeating: 7, count: PasswordHash.saltCount)

    @Test func sameInputsSameKeyDifferentPassphraseDifferentKey() throws {
        let cost = Argon2Cost.unsafeMinimumForTesting
        let a = try PasswordHash.deriveKey(passphrase: SecureBytes(copying: Array("pw".utf8)), salt: salt, cost: cost)
        let b = try PasswordHash.deriveKey(passphrase: SecureBytes(copying: Array("pw".utf8)), salt: salt, cost: cost)
        let c = try PasswordHash.deriveKey(passphrase: SecureBytes(copying: Array("pW".utf8)), salt: salt, cost: cost)
        #expect(a == b)
        #expect(a != c)
    }

    /// RFC 9106-style known answer, computed by libsodium's crypto_pwhash_argon2id: guards against a
    /// silently changed algorithm or parameter order, which would lock every user out.
    @Test func matchesAKnownAnswer() throws {
        let key = try PasswordHash.deriveKey(
            passphrase: SecureBytes(copying: Array("password".utf8)),
            salt: Array("somesaltsomesalt".utf8), cost: Argon2Cost(operations: 2, memoryBytes: 65536))
        let hex = key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        #expect(hex == KnownAnswers.argon2id_password_somesalt_t2_m64k)
    }

    @Test func costBounds() {
        #expect(Argon2Cost.moderate.isWithinBounds)
        #expect(Argon2Cost.sensitive.isWithinBounds)
        #expect(Argon2Cost.unsafeMinimumForTesting.isWithinBounds)
        #expect(!Argon2Cost(operations: 11, memoryBytes: 1 << 20).isWithinBounds)
        #expect(!Argon2Cost(operations: 3, memoryBytes: 2 << 30).isWithinBounds)
        #expect(!Argon2Cost(operations: 0, memoryBytes: 1 << 20).isWithinBounds)
    }

    @Test func wrongSaltLengthIsRefused() {
        #expect(throws: CryptoError.invalidLength(expected: 16, actual: 3)) {
            try PasswordHash.deriveKey(passphrase: SecureBytes(copying: [1]), salt: [1, 2, 3], cost: .unsafeMinimumForTesting)
        }
    }
}
