import Testing
import VaultPolicy

/// Every class of error names the file and the exact line, and says what to do.
struct PolicyErrorTests {
    /// A valid rule body to build broken files from.
    static let rule = """
        [[rule]]
        name = "r"
        effect = "allow"
        operations = ["*"]
        services = ["*"]
        """

    struct Case: CustomTestStringConvertible, Sendable {
        var text: String
        var line: Int?
        var code: PolicyError.Code
        var fragment: String
        var testDescription: String { fragment }
    }

    static let cases: [Case] = [
        Case(text: rule + "\nnmae = \"x\"\n", line: 6, code: .unknownKey,
             fragment: "unknown key 'nmae' in [[rule]]; known keys: name, effect, uids, gids, executables, operations, services"),
        Case(text: "version = 2\n" + rule, line: 1, code: .unknownKey, fragment: "unknown key 'version' in the top level; known keys: rule"),
        Case(text: "# c\n\n[[rule]]\nname = \"r\"\neffect = \"allow\"\noperations = [\"*\"]\n", line: 3, code: .missingKey,
             fragment: "is missing the required key 'services'"),
        Case(text: rule + "\n[[rule]]\nname = \"s\"\nservices = [\"*\"]\n", line: 6, code: .missingKey, fragment: "missing the required key 'effect'"),
        Case(text: rule + "\neffect = \"deny\"\n", line: 6, code: .duplicateKey, fragment: "duplicate key 'effect'; it is already defined at line 3"),
        Case(text: "[rule]\nname = \"r\"\n", line: 1, code: .invalidValue, fragment: "'rule' must be an array of tables"),
        Case(text: "[[rule]]\n[rule]\n", line: 2, code: .duplicateKey, fragment: "[rule] conflicts with 'rule', already defined at line 1"),
        Case(text: rule + "\nuids = \"500\"\n", line: 6, code: .invalidValue, fragment: "'uids' must be an array such as [\"@self\", 1000], not a string"),
        Case(text: rule + "\nuids = [true]\n", line: 6, code: .invalidValue, fragment: "'uids' must be a list of ids"),
        Case(text: rule + "\nuids = [-1]\n", line: 6, code: .invalidValue, fragment: "-1 in 'uids' is not a valid id"),
        Case(text: rule + "\ngids = [\"@self\"]\n", line: 6, code: .invalidValue, fragment: "\"@self\" in 'gids' is not valid; use numbers or \"*\""),
        Case(text: rule + "\nuids = []\n", line: 6, code: .invalidValue, fragment: "'uids' is an empty array"),
        Case(text: rule + "\nexecutables = [\"sorted-cli\"]\n", line: 6, code: .invalidValue, fragment: "must be an absolute path"),
        Case(text: "[[rule]]\nname = 7\n", line: 2, code: .invalidValue, fragment: "'name' must be a string"),
        Case(text: "[[rule]]\nname = \"has space\"\n", line: 2, code: .invalidValue, fragment: "may contain only letters"),
        Case(text: "[[rule]]\nname = \"r\"\neffect = \"permit\"\n", line: 3, code: .invalidValue,
             fragment: "effect \"permit\" is not valid; write effect = \"allow\" or effect = \"deny\""),
        Case(text: "[[rule]]\nname = \"r\"\neffect = \"allow\"\noperations = [\"store\", \"retreive\"]\nservices = [\"*\"]\n", line: 4,
             code: .invalidValue, fragment: "unknown operation \"retreive\"; use \"*\", a prefix such as \"session.*\", or one of: store, retrieve"),
        Case(text: "[[rule]]\nname = \"r\"\neffect = \"allow\"\noperations = [\"stor*\"]\nservices = [\"*\"]\n", line: 4, code: .invalidValue, fragment: "unknown operation \"stor*\""),
        Case(text: "[[rule]]\nname = \"r\"\neffect = \"allow\"\noperations = [\"*\"]\nservices = [\"\"]\n", line: 5, code: .invalidValue, fragment: "empty service pattern"),
        Case(text: "[[rule]]\nname = \"r\"\neffect = \"allow\"\noperations = [\"*\"]\nservices = [\"a\\u0001\"]\n", line: 5, code: .invalidValue, fragment: "contains a control character"),
        Case(text: rule + "\n" + rule, line: 6, code: .duplicateRule, fragment: "rule name 'r' is already used at t.toml:1"),
        // Syntax.
        Case(text: "[[rule]]\nname = \"r\n", line: 2, code: .syntax, fragment: "unterminated string; close it with \" on the same line"),
        Case(text: "[[rule]]\nname = 'r\n", line: 2, code: .syntax, fragment: "unterminated literal string"),
        Case(text: "\n\nx = \"a\\qb\"\n", line: 3, code: .syntax, fragment: "invalid escape '\\q'"),
        Case(text: "x = \"\\uD800\"\n", line: 1, code: .syntax, fragment: "not a Unicode scalar value"),
        Case(text: "x = \"\\u12\"\n", line: 1, code: .syntax, fragment: "needs exactly 4 hexadecimal digits"),
        Case(text: "# ok\nx = \"a\u{01}b\"\n", line: 2, code: .syntax, fragment: "control character U+0001 at column 7"),
        Case(text: "x = \"a\"\r\ny = 1\rz = 2\n", line: 2, code: .syntax, fragment: "control character U+000D"),
        Case(text: "x = 1 y = 2\n", line: 1, code: .syntax, fragment: "unexpected text after the value of 'x'"),
        Case(text: "x\n", line: 1, code: .syntax, fragment: "expected '=' after key 'x'"),
        Case(text: "x = \n", line: 1, code: .syntax, fragment: "expected a value after '='"),
        Case(text: "x = yes\n", line: 1, code: .syntax, fragment: "invalid value 'yes'; strings need quotes"),
        Case(text: "x = 012\n", line: 1, code: .syntax, fragment: "leading zeros are not allowed"),
        Case(text: "x = 1__0\n", line: 1, code: .syntax, fragment: "invalid integer '1__0'"),
        Case(text: "x = 99999999999999999999\n", line: 1, code: .invalidValue, fragment: "is out of range"),
        Case(text: "x = [1 2]\n", line: 1, code: .syntax, fragment: "expected ',' or ']' in array"),
        Case(text: "[[rule]\n", line: 1, code: .syntax, fragment: "table header is not closed; write it as [[rule]]"),
        Case(text: "[a] x\n", line: 1, code: .syntax, fragment: "unexpected text after [a]"),
        Case(text: "x = 1\nx = 2\n", line: 2, code: .duplicateKey, fragment: "duplicate key 'x'; it is already defined at line 1"),
        Case(text: "[a]\n[a]\n", line: 2, code: .duplicateKey, fragment: "[a] conflicts with 'a', already defined at line 1"),
        // Valid TOML we refuse.
        Case(text: "x = { a = 1 }\n", line: 1, code: .unsupported, fragment: "an inline table ({ … }) is not supported in sortedvault policy files"),
        Case(text: "\nx = \"\"\"\nabc\"\"\"\n", line: 2, code: .unsupported, fragment: "a multi-line string (\"\"\") is not supported"),
        Case(text: "x = '''a'''\n", line: 1, code: .unsupported, fragment: "multi-line literal string"),
        Case(text: "a.b = 1\n", line: 1, code: .unsupported, fragment: "a dotted key (a.… = …) is not supported"),
        Case(text: "\"a\" = 1\n", line: 1, code: .unsupported, fragment: "a quoted key is not supported"),
        Case(text: "x = 1.5\n", line: 1, code: .unsupported, fragment: "a float (1.5) is not supported"),
        Case(text: "x = 1e3\n", line: 1, code: .unsupported, fragment: "a float (1e3)"),
        Case(text: "x = -inf\n", line: 1, code: .unsupported, fragment: "a float (-inf)"),
        Case(text: "x = 1979-05-27\n", line: 1, code: .unsupported, fragment: "a date or time (1979-05-27) is not supported"),
        Case(text: "x = 07:32:00\n", line: 1, code: .unsupported, fragment: "a date or time"),
        Case(text: "x = 0xff\n", line: 1, code: .unsupported, fragment: "a hexadecimal, octal or binary integer"),
        Case(text: "x = [\n  1,\n]\n", line: 1, code: .unsupported, fragment: "multi-line arrays are not supported"),
        Case(text: "x = [[1], [2]]\n", line: 1, code: .unsupported, fragment: "a nested array is not supported"),
        // Bounds.
        Case(text: "# ok\n#" + String(repeating: "x", count: 4096) + "\n", line: 2, code: .tooLarge, fragment: "line is 4097 bytes, more than the 4096-byte limit"),
        Case(text: String(repeating: "# padding padding padding padding padding padding padding\n", count: 1200), line: nil, code: .tooLarge,
             fragment: "more than the 65536-byte limit"),
    ]

    @Test(arguments: cases)
    func reportsFileLineAndReason(_ c: Case) {
        do {
            _ = try Policy.parse(c.text, file: "t.toml", daemonUID: 500)
            Issue.record("accepted: \(c.text.prefix(200))")
        } catch let error as PolicyError {
            #expect(error.code == c.code, "\(error)")
            #expect(error.file == "t.toml")
            #expect(error.line == c.line, "\(error)")
            let prefix = c.line.map { "t.toml:\($0): " } ?? "t.toml: "
            #expect(error.description.hasPrefix(prefix), "\(error)")
            #expect(error.description.contains(c.fragment), "\(error)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func lineOfExactlyTheLimitIsAccepted() throws {
        let text = "#" + String(repeating: "x", count: 4095) + "\n"
        _ = try Policy.parse(text, file: "t.toml", daemonUID: 500)
    }
}
