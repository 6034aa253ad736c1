import Testing
@testable import VaultOIDC

@Suite(.timeLimit(.minutes(20))) struct Base64URLTests {
    @Test func decodesWhatItEncodes() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes).utf8) == bytes)
        }
    }

    @Test func refusesPaddingOtherAlphabetsAndNonCanonicalSpellings() {
        #expect(Base64URL.decode("QQ==".utf8) == nil)       // padding
        #expect(Base64URL.decode("a+b/".utf8) == nil)       // standard alphabet
        #expect(Base64URL.decode("QQ ".utf8) == nil)        // whitespace
        #expect(Base64URL.decode("QUJDR".utf8) == nil)      // length 4n+1
        #expect(Base64URL.decode("QR".utf8) == nil)         // "A" with non-zero unused bits
        #expect(Base64URL.decode("QQ".utf8) == [0x41])
    }
}
