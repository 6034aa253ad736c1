import Testing
import VaultCrypto
@testable import VaultAge

@Suite(.timeLimit(.minutes(20))) struct Bech32Tests {
    /// BIP-173's valid Bech32 strings.
    @Test(arguments: [
        "A12UEL5L", "a12uel5l",
        "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
        "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
        "11" + String(repeating: "q", count: 82) + "c8247j",
        "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
        "?1ezyfcl",
    ])
    func validStringsDecodeAndEncodeBack(_ text: String) throws {
        let (hrp, data) = try #require(Array(text.utf8).withUnsafeBytes { Bech32.decode($0) })
        #expect(hrp == String(text[..<text.lastIndex(of: "1")!]))
        // Re-encoding gives the same text when the data was whole bytes (all of these but one).
        if text.hasPrefix("11qq") { return }
        #expect(String(decoding: data.withUnsafeBytes { Bech32.encode(hrp: hrp, data: $0) }, as: UTF8.self) == text)
    }

    /// BIP-173's invalid strings, and a mixed-case one.
    @Test(arguments: [
        "\u{20}1nwldj5", "\u{7F}1axkwrx", "\u{80}1eym55h", "pzry9x0s0muk", "1pzry9x0s0muk", "x1b4n0q5v",
        "li1dgmt3", "de1lg7wt\u{FF}", "A1G7SGD8", "10a06t8", "1qzzfhee", "a12UEL5L",
        "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwk",  // last character changed
    ])
    func invalidStringsAreRefused(_ text: String) {
        #expect(Array(text.utf8).withUnsafeBytes { Bech32.decode($0) } == nil)
    }

    @Test func randomDataRoundTripsWithAgesPrefixes() throws {
        for count in [0, 1, 31, 32, 33, 100] {
            let data = SecureRandom.bytes(count: count)
            for hrp in ["age", "AGE-SECRET-KEY-"] {
                let text = data.withUnsafeBytes { Bech32.encode(hrp: hrp, data: $0) }
                let decoded = try #require(text.withUnsafeBytes { Bech32.decode($0) })
                #expect(decoded.hrp == hrp && decoded.data == data)
            }
        }
    }

    /// The example key pair of the age spec (C2SP age.md, "The X25519 recipient type").
    @Test func theSpecsExampleIdentityGivesItsRecipient() throws {
        let identity = try AgeIdentity.x25519(secretKey: SecureBytes(copying: Array(
            "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX".utf8)))
        #expect(identity.recipient?.description == "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
        #expect(identity.secretKeyText()?.constantTimeEquals(Array(
            "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX".utf8)) == true)
        #expect(!identity.description.contains("SECRET"))
    }

    @Test func identitiesAndRecipientsRefuseEachOthersPrefixAndCase() {
        let recipient = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
        #expect(throws: AgeError(.invalidRecipient, "")) { try AgeRecipient.x25519(recipient.uppercased()) }
        #expect(throws: AgeError(.invalidIdentity, "")) {
            try AgeIdentity.x25519(secretKey: SecureBytes(copying: Array(recipient.utf8)))
        }
        #expect(throws: AgeError(.invalidIdentity, "")) {
            try AgeIdentity.x25519(secretKey: SecureBytes(copying: Array(
                "age-secret-key-1gfpyysjzgfpyysjzgfpyysjzgfpyysjzgfpyysjzgfpyysjzgfpq4egaex".utf8)))
        }
    }
}
