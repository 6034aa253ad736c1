/// Reads keys and values from one line of a policy file.
///
/// Everything sortedvault accepts fits on one line, so the scanner never looks past the end of
/// its line: an unterminated string or array is an error at that line, not somewhere below.
struct TOMLLineScanner {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    let file: String
    let line: Int

    init(_ scalars: [Unicode.Scalar], file: String, line: Int) {
        self.scalars = scalars
        self.file = file
        self.line = line
    }

    var atEnd: Bool { index >= scalars.count }
    var peek: Unicode.Scalar? { atEnd ? nil : scalars[index] }

    func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    mutating func advance(_ count: Int = 1) { index += count }

    mutating func skipWhitespace() {
        while let c = peek, c == " " || c == "\t" { advance() }
    }

    /// True when only whitespace and an optional comment are left.
    mutating func atEndOfContent() -> Bool {
        skipWhitespace()
        return atEnd || peek == "#"
    }

    func error(_ code: PolicyError.Code, _ message: String) -> PolicyError {
        PolicyError(code, file: file, line: line, message)
    }

    func unsupported(_ what: String) -> PolicyError {
        error(.unsupported, "\(what) is not supported in sortedvault policy files")
    }

    // MARK: Keys

    /// A bare key: `A-Za-z0-9_-`, at least one character.
    mutating func bareKey() throws -> String {
        if peek == "\"" || peek == "'" { throw unsupported("a quoted key") }
        var key = ""
        while let c = peek, Self.isBareKeyCharacter(c) {
            key.unicodeScalars.append(c)
            advance()
        }
        if key.isEmpty {
            let found = peek.map { "'\(Self.printable($0))'" } ?? "the end of the line"
            throw error(.syntax, "expected a key (letters, digits, _ or -) but found \(found)")
        }
        return key
    }

    static func isBareKeyCharacter(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
        default: false
        }
    }

    // MARK: Values

    mutating func value() throws -> TOMLValue {
        guard let c = peek else { throw error(.syntax, "expected a value after '='") }
        switch c {
        case "\"":
            if peek(1) == "\"" && peek(2) == "\"" { throw unsupported("a multi-line string (\"\"\")") }
            return .string(try basicString())
        case "'":
            if peek(1) == "'" && peek(2) == "'" { throw unsupported("a multi-line literal string (''')") }
            return .string(try literalString())
        case "[":
            return .array(try array())
        case "{":
            throw unsupported("an inline table ({ … })")
        default:
            return try bareValue()
        }
    }

    private mutating func array() throws -> [TOMLValue] {
        advance()  // [
        var elements: [TOMLValue] = []
        while true {
            skipWhitespace()
            if atEnd || peek == "#" {
                throw error(.unsupported, "array is not closed on this line; write it on one line as [\"a\", \"b\"] (multi-line arrays are not supported in sortedvault policy files)")
            }
            if peek == "]" { advance(); return elements }
            if peek == "[" { throw unsupported("a nested array") }
            elements.append(try value())
            skipWhitespace()
            if peek == "," {
                advance()
            } else if peek != "]" && !(atEnd || peek == "#") {
                throw error(.syntax, "expected ',' or ']' in array but found '\(Self.printable(peek!))'")
            }
        }
    }

    private mutating func basicString() throws -> String {
        advance()  // "
        var result = ""
        while true {
            guard let c = peek else {
                throw error(.syntax, "unterminated string; close it with \" on the same line")
            }
            advance()
            switch c {
            case "\"":
                return result
            case "\\":
                result.unicodeScalars.append(try escape())
            default:
                result.unicodeScalars.append(c)
            }
        }
    }

    private mutating func escape() throws -> Unicode.Scalar {
        guard let c = peek else {
            throw error(.syntax, "unterminated string; a backslash ends the line")
        }
        advance()
        switch c {
        case "b": return "\u{08}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{0C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u": return try unicodeEscape(digits: 4)
        case "U": return try unicodeEscape(digits: 8)
        default:
            throw error(.syntax, "invalid escape '\\\(Self.printable(c))' in string; use \\\\ for a backslash, or a literal string '…'")
        }
    }

    private mutating func unicodeEscape(digits: Int) throws -> Unicode.Scalar {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard let c = peek, let digit = Self.hexValue(c) else {
                throw error(.syntax, "\\\(digits == 4 ? "u" : "U") needs exactly \(digits) hexadecimal digits")
            }
            value = value << 4 | digit
            advance()
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw error(.syntax, "escape names U+\(String(value, radix: 16, uppercase: true)), which is not a Unicode scalar value")
        }
        return scalar
    }

    private static func hexValue(_ c: Unicode.Scalar) -> UInt32? {
        switch c {
        case "0"..."9": c.value - 48
        case "a"..."f": c.value - 87
        case "A"..."F": c.value - 55
        default: nil
        }
    }

    private mutating func literalString() throws -> String {
        advance()  // '
        var result = ""
        while let c = peek {
            advance()
            if c == "'" { return result }
            result.unicodeScalars.append(c)
        }
        throw error(.syntax, "unterminated literal string; close it with ' on the same line")
    }

    /// Booleans and integers; recognises the TOML forms we refuse so the message can name them.
    private mutating func bareValue() throws -> TOMLValue {
        var token = ""
        while let c = peek, c != " ", c != "\t", c != ",", c != "]", c != "#" {
            token.unicodeScalars.append(c)
            advance()
        }
        if token == "true" { return .boolean(true) }
        if token == "false" { return .boolean(false) }
        let unsigned = token.hasPrefix("+") || token.hasPrefix("-") ? String(token.dropFirst()) : token
        if unsigned == "inf" || unsigned == "nan" { throw unsupported("a float (\(token))") }
        guard let first = unsigned.unicodeScalars.first, ("0"..."9").contains(first) else {
            let shown = token.isEmpty ? Self.printable(peek ?? " ") : token
            throw error(.syntax, "invalid value '\(shown)'; strings need quotes (\"…\"), booleans are true or false")
        }
        if unsigned.contains(":") || unsigned.dropFirst().contains("-") { throw unsupported("a date or time (\(token))") }
        if unsigned.hasPrefix("0x") || unsigned.hasPrefix("0o") || unsigned.hasPrefix("0b") {
            throw unsupported("a hexadecimal, octal or binary integer (\(token))")
        }
        if unsigned.contains(".") || unsigned.contains("e") || unsigned.contains("E") {
            throw unsupported("a float (\(token))")
        }
        return .integer(try integer(token, unsigned: unsigned))
    }

    private func integer(_ token: String, unsigned: String) throws -> Int64 {
        let scalars = Array(unsigned.unicodeScalars)
        var digits = ""
        for (i, c) in scalars.enumerated() {
            if ("0"..."9").contains(c) {
                digits.unicodeScalars.append(c)
            } else if c == "_", i > 0, i + 1 < scalars.count,
                      ("0"..."9").contains(scalars[i - 1]), ("0"..."9").contains(scalars[i + 1]) {
                continue
            } else {
                throw error(.syntax, "invalid integer '\(token)'; use digits, optionally with a sign and single underscores between digits")
            }
        }
        if digits.count > 1 && digits.hasPrefix("0") {
            throw error(.syntax, "invalid integer '\(token)'; leading zeros are not allowed in TOML")
        }
        guard let value = Int64(token.hasPrefix("-") ? "-" + digits : digits) else {
            throw error(.invalidValue, "integer '\(token)' is out of range")
        }
        return value
    }

    /// A scalar as it can be shown in a message: control characters as U+XXXX.
    static func printable(_ c: Unicode.Scalar) -> String {
        if c.value < 0x20 || c.value == 0x7F {
            return "U+" + String(c.value, radix: 16, uppercase: true).leftPadded(to: 4)
        }
        return String(c)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
