import Testing
@testable import VaultPolicy

/// What the parser accepts, and that it means what TOML means.
struct TOMLParserTests {
    func values(_ text: String) throws -> [String: TOMLValue] {
        let root = try TOMLParser.parse(text, file: "t.toml")
        var result: [String: TOMLValue] = [:]
        for key in root.keys {
            if case .value(let value) = root[key]!.node { result[key] = value }
        }
        return result
    }

    @Test func scalars() throws {
        let v = try values(#"""
            # comment
              
            basic = "q\" b\\ n\n t\t u\u00e9 U\U0001F600 b\b f\f r\r"   # trailing comment
            literal = 'C:\path\*.toml "as is"'
            empty = ""
            hash = "# not a comment"
            plus = +1_000
            minus = -17
            zero = 0
            negzero = -0
            big = 9_223_372_036_854_775_807
            yes = true
            no = false
            mixed = ["@self", 1000, "*", ]
            nested-ok_key = [ ]
            """#)
        #expect(v["basic"] == .string("q\" b\\ n\n t\t u\u{E9} U\u{1F600} b\u{08} f\u{0C} r\r"))
        #expect(v["literal"] == .string(#"C:\path\*.toml "as is""#))
        #expect(v["empty"] == .string(""))
        #expect(v["hash"] == .string("# not a comment"))
        #expect(v["plus"] == .integer(1000))
        #expect(v["minus"] == .integer(-17))
        #expect(v["zero"] == .integer(0))
        #expect(v["negzero"] == .integer(0))
        #expect(v["big"] == .integer(Int64.max))
        #expect(v["yes"] == .boolean(true))
        #expect(v["no"] == .boolean(false))
        #expect(v["mixed"] == .array([.string("@self"), .integer(1000), .string("*")]))
        #expect(v["nested-ok_key"] == .array([]))
    }

    @Test func crlfAndTabs() throws {
        let v = try values("a\t=\t\"x\"\r\nb = 2\r\n")
        #expect(v["a"] == .string("x"))
        #expect(v["b"] == .integer(2))
    }

    @Test func tablesAndArraysOfTables() throws {
        let root = try TOMLParser.parse("""
            top = 1
            [[rule]]
            name = "a"
            [[ rule ]]
            name = "b"
            [ a . b ]
            x = 1
            [a]
            y = 2
            """, file: "t.toml")
        #expect(root.keys == ["top", "rule", "a"])
        guard case .arrayOfTables(let rules) = root["rule"]!.node else { Issue.record("rule"); return }
        #expect(rules.map(\.line) == [2, 4])
        #expect(rules.count == 2)
        #expect(rules[1]["name"]?.line == 5)
        guard case .table(let a) = root["a"]!.node else { Issue.record("a"); return }
        #expect(a.keys == ["b", "y"])
        #expect(a.line == 8)   // defined explicitly after being implied by [a.b]
    }
}
