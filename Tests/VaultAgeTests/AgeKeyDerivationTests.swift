import Testing
import VaultCrypto
@testable import VaultAge

/// libsodium's HMAC-SHA-256, the HKDF-SHA-256 built on it and X25519, against the RFCs' own vectors
/// (the CCTV vectors and the real `age` check them again as part of whole files).
@Suite(.timeLimit(.minutes(1))) struct AgeKeyDerivationTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func bytes(_ secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    @Test func hmacMatchesRFC4231TestCase2() {
        let mac = Array("Jefe".utf8).withUnsafeBytes { key in
            Array("what do ya want for nothing?".utf8).withUnsafeBytes { AgeKeyDerivation.hmac(key: key, message: $0) }
        }
        #expect(mac == Self.hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    /// RFC 5869 A.1 and A.3 (no salt, no info): their first 32 bytes of output are T(1).
    @Test func hkdfMatchesRFC5869WithAndWithoutSalt() {
        let ikm = SecureBytes(copying: [UInt8](repeating: 0x0b, count: 22))
        let withSalt = AgeKeyDerivation.hkdf(secret: ikm, salt: Array(0x00...0x0c), info: Array(0xf0...0xf9))
        #expect(Self.bytes(withSalt) == Self.hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"))
        let bare = AgeKeyDerivation.hkdf(secret: ikm, salt: [], info: [])
        #expect(Self.bytes(bare) == Self.hex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"))
    }

    /// RFC 7748 6.1: both sides' public keys and their shared secret; a low-order point gives none.
    @Test func x25519MatchesRFC7748AndRefusesALowOrderPoint() {
        let alice = SecureBytes(copying: Self.hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = SecureBytes(copying: Self.hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        let alicePublic = AgeKeyDerivation.publicKey(of: alice)
        let bobPublic = AgeKeyDerivation.publicKey(of: bob)
        #expect(alicePublic == Self.hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        #expect(bobPublic == Self.hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        let shared = Self.hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(AgeKeyDerivation.sharedSecret(alice, bobPublic).map(Self.bytes) == shared)
        #expect(AgeKeyDerivation.sharedSecret(bob, alicePublic).map(Self.bytes) == shared)
        #expect(AgeKeyDerivation.sharedSecret(alice, [UInt8](repeating: 0, count: 32)) == nil)
    }
}
