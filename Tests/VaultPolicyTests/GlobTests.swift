import Testing
import VaultPolicy

struct GlobTests {
    @Test(arguments: [
        ("*", "", true), ("*", "a/b.c", true), ("a*", "a", true), ("a*c", "abbbc", true),
        ("a*c", "abbbd", false), ("?", "", false), ("?", "é", true), ("a?c", "abc", true),
        ("*.admin", "com.sorted.admin", true), ("*.admin", "admin", false), ("a*b*c", "aXbYbZc", true),
        ("a*b*c", "aXbYc", true), ("a*b*c", "acb", false), ("literal", "literal", true),
        ("literal", "Literal", false), ("[a]", "[a]", true), ("\\*", "\\x", true),
        ("*a*a*a*a*a*b", String(repeating: "a", count: 200), false),
    ])
    func matches(pattern: String, text: String, expected: Bool) {
        #expect(Glob(pattern).matches(text) == expected)
    }

    @Test func comparesUnicodeScalarsNotCharacters() {
        // "é" precomposed vs "e" + combining acute: equal as Characters, different as scalars.
        #expect(!Glob("caf\u{E9}").matches("cafe\u{301}"))
        #expect(Glob("caf?").matches("caf\u{E9}"))
        #expect(!Glob("caf?").matches("cafe\u{301}"))
    }
}
