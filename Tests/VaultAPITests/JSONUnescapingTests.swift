import BoundedJSON
import Testing

/// `JSONValue.unescape` resolves a diverted string's escapes into the caller's memory exactly as the
/// parser resolves them into a `String`.
@Suite(.timeLimit(.minutes(20))) struct JSONUnescapingTests {
    private func unescaped(_ raw: String) throws -> [UInt8] {
        try Array(raw.utf8).withUnsafeBytes { raw in
            let count = try JSONValue.unescape(raw, into: nil)
            var out = [UInt8](repeating: 0xEE, count: count)
            let written = try out.withUnsafeMutableBytes { try JSONValue.unescape(raw, into: $0) }
            #expect(written == count)
            return out
        }
    }

    @Test(arguments: [
        #"plain"#, #"a\"b"#, #"back\\slash"#, #"sl\/ash"#, #"\b\f\n\r\t"#, #"\u0041\u00e9\u20ac"#,
        #"\ud83d\ude00 pair"#, #"é, literal UTF-8"#, "",
    ])
    func matchesWhatTheParserDecodes(_ raw: String) throws {
        let parsed = try JSONValue.parse(Array("\"\(raw)\"".utf8))
        #expect(try unescaped(raw) == Array((parsed.stringValue ?? "-").utf8))
    }

    @Test(arguments: [
        (#"a\x"#, JSONParseError.Reason.invalidEscape), (#"a\"#, .unexpectedEnd), (#"\u12"#, .unexpectedEnd),
        (#"\u12G4"#, .invalidEscape), (#"\ud800"#, .loneSurrogate), (#"\udc00"#, .loneSurrogate),
        (#"\ud800\u0041"#, .loneSurrogate), ("tab\there", .controlCharacter),
    ])
    func refusesWhatTheParserRefuses(_ raw: String, _ reason: JSONParseError.Reason) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(Array("\"\(raw)\"".utf8)) }
        do {
            _ = try unescaped(raw)
            Issue.record("accepted \(raw.debugDescription)")
        } catch let error as JSONParseError {
            #expect(error.reason == reason)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
