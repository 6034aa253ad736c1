import Testing
@testable import CredentialHelpers

/// Go's `encoding/json` string encoding (the Go 1.19 that builds Debian 12's reference helpers),
/// byte for byte; the docker test compares the valid-UTF-8 cases with docker-credential-pass itself.
@Suite(.timeLimit(.minutes(20))) struct GoJSONStringTests {
    static func encoded(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        bytes.withUnsafeBytes { GoJSONString.append($0, to: &output) }
        return String(decoding: output, as: UTF8.self)
    }

    @Test func htmlCharactersAndLineSeparatorsAreEscapedAsGoDoes() {
        #expect(Self.encoded(Array("<a href=\"x\">&</a>".utf8)) == #""\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e""#)
        #expect(Self.encoded(Array("a\u{2028}b\u{2029}c".utf8)) == #""a\u2028b\u2029c""#)
    }

    @Test func controlBytesGetShortOrHexEscapes() {
        #expect(Self.encoded([0x0A, 0x0D, 0x09, 0x08, 0x0C, 0x01, 0x1F, 0x7F]) == "\"\\n\\r\\t\\u0008\\u000c\\u0001\\u001f\u{7F}\"")
        #expect(Self.encoded(Array("back\\slash".utf8)) == #""back\\slash""#)
    }

    @Test func eachByteOfBrokenUTF8BecomesOneReplacementEscape() {
        #expect(Self.encoded([0x61, 0xFF, 0x62]) == #""a\ufffdb""#)
        #expect(Self.encoded([0xE2, 0x82, 0x61]) == #""\ufffd\ufffda""#)         // truncated sequence
        #expect(Self.encoded([0xED, 0xA0, 0x80]) == #""\ufffd\ufffd\ufffd""#)     // a UTF-16 surrogate
        #expect(Self.encoded([0xC0, 0xAF]) == #""\ufffd\ufffd""#)                 // overlong
        #expect(Self.encoded(Array("é€😀".utf8)) == "\"é€😀\"")                  // well-formed passes through
    }
}
