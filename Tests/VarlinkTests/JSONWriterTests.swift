import Testing
import Varlink

@Suite(.timeLimit(.minutes(20))) struct JSONWriterTests {
    @Test func writesCompactSortedJSON() {
        let value: JSONValue = ["b": [1, 2.5, nil, true], "a": "x\"\\\n\u{1}é"]
        #expect(String(decoding: value.serialized(), as: UTF8.self) == #"{"a":"x\"\\\n\u0001é","b":[1,2.5,null,true]}"#)
    }

    @Test func keepsDoublesAsDoubles() {
        #expect(String(decoding: JSONValue.double(1).serialized(), as: UTF8.self) == "1.0")
        #expect(String(decoding: JSONValue.double(.pi).serialized(), as: UTF8.self) == "3.141592653589793")
        #expect(String(decoding: JSONValue.double(.infinity).serialized(), as: UTF8.self) == "null")
    }

    @Test(arguments: [
        JSONValue.null, true, 0, .int(.min), .int(.max), -0.5, 1e300, .double(.leastNonzeroMagnitude), .double(.pi), "", "\u{0}\u{1F}\u{7F}\"\\/",
        "😀 é \u{10FFFF}", [[], [:], [[nil]]], ["key with \"quotes\"": ["nested": [1, "two", 3.0]]],
    ])
    func roundTrips(value: JSONValue) throws {
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test func accessors() {
        let value: JSONValue = ["s": "x", "i": 3, "d": 3.0, "f": 3.5, "b": false, "a": [1], "o": [:]]
        #expect(value["s"]?.stringValue == "x")
        #expect(value["i"]?.intValue == 3)
        #expect(value["d"]?.intValue == 3)
        #expect(value["f"]?.intValue == nil)
        #expect(value["b"]?.boolValue == false)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["o"]?.objectValue == [:])
        #expect(value["s"]?.intValue == nil)
        #expect(value["missing"] == nil)
    }
}
