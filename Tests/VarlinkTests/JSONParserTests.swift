import Testing
@testable import Varlink

@Suite(.timeLimit(.minutes(20))) struct JSONParserTests {
    static let valid: [(String, JSONValue)] = [
        ("null", nil), ("true", true), ("false", false), ("0", 0), ("-0", 0), ("42", 42),
        ("-9223372036854775808", .int(.min)), ("9223372036854775807", .int(.max)),
        ("9223372036854775808", .double(9223372036854775808)), ("1.5", 1.5), ("-1.25e2", -125.0),
        ("1E3", 1000.0), ("1e-2", 0.01), ("2.0", 2.0), (#""""#, ""), (#""a\"\\\/\b\f\n\r\t""#, "a\"\\/\u{8}\u{c}\n\r\t"),
        (#""\u00e9\u20AC""#, "é€"), (#""\ud83d\ude00""#, "😀"), ("\"é😀\"", "é😀"), (" [ 1 , [ ] , { } ] ", [1, [], [:]]),
        (#"{"a":{"b":[null,true]}}"#, ["a": ["b": [nil, true]]]),
    ]

    @Test(arguments: valid.indices)
    func parsesValidDocuments(index: Int) throws {
        let (text, expected) = Self.valid[index]
        #expect(try JSONValue.parse(Array(text.utf8)) == expected)
    }

    static let invalid: [(String, JSONParseError.Reason)] = [
        ("", .unexpectedEnd), (" ", .unexpectedEnd), ("nul", .unexpectedEnd), ("nulx", .unexpectedCharacter),
        ("True", .unexpectedCharacter), ("01", .invalidNumber), ("-", .unexpectedEnd), ("1.", .unexpectedEnd),
        (".5", .unexpectedCharacter), ("1e", .unexpectedEnd), ("+1", .unexpectedCharacter), ("1e400", .invalidNumber),
        ("0x10", .trailingData), ("NaN", .unexpectedCharacter), ("[1,]", .unexpectedCharacter), ("[1 2]", .unexpectedCharacter),
        (#"{"a"}"#, .unexpectedCharacter), (#"{"a":1,}"#, .unexpectedCharacter), ("{a:1}", .unexpectedCharacter),
        (#"{"a":1,"a":2}"#, .duplicateKey), (#""abc"#, .unexpectedEnd), ("\"a\tb\"", .controlCharacter),
        (#""\x""#, .invalidEscape), (#""\u12G4""#, .invalidEscape), (#""\ud800""#, .loneSurrogate),
        (#""\udc00""#, .loneSurrogate), (#""\ud800\u0041""#, .loneSurrogate), ("{} {}", .trailingData), ("1 x", .trailingData),
        ("'a'", .unexpectedCharacter),
    ]

    @Test(arguments: invalid.indices)
    func rejectsInvalidDocuments(index: Int) {
        let (text, reason) = Self.invalid[index]
        #expect(throws: JSONParseError.self) { try JSONValue.parse(Array(text.utf8)) }
        do {
            _ = try JSONValue.parse(Array(text.utf8))
        } catch {
            #expect(error.reason == reason, "\(text)")
        }
    }

    @Test(arguments: [
        [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xE0, 0x80, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0x80, 0x22],
    ] as [[UInt8]])
    func rejectsInvalidUTF8(bytes: [UInt8]) {
        #expect(throws: JSONParseError(.invalidUTF8, at: 1)) { try JSONValue.parse(bytes) }
    }

    @Test func refusesDeepNestingWithoutRecursing() {
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(throws: JSONParseError(.tooDeep, at: 64)) { try JSONValue.parse(deep) }
        let objects = Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(objects) }
    }

    @Test func acceptsNestingUpToTheLimit() throws {
        let text = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONValue.parse(Array(text.utf8))
        let tooDeep = "[" + text + "]"
        #expect(throws: JSONParseError.self) { try JSONValue.parse(Array(tooDeep.utf8)) }
    }

    @Test func errorsDoNotQuoteTheInput() {
        do {
            _ = try JSONValue.parse(Array(#"{"token":"hunter2" x}"#.utf8))
            Issue.record("expected failure")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test func descriptionRedactsStringsAndNumbers() {
        let value: JSONValue = ["token": "hunter2", "ttl": 5, "ok": true]
        #expect(value.description == #"{"ok": true, "token": <string>, "ttl": <number>}"#)
    }
}
