/// A bounded parser for the varlink interface definition language
/// (https://varlink.org/Interface-Definition), the first stage of generating the wire contract
/// from `interfaces/*.varlink`. Foundation-free so the build tool and tests share it. A bad file is
/// rejected with the line and column of the first fault, which the build tool reports as a build
/// error.

/// A type as written in the IDL.
public indirect enum IDLType: Hashable, Sendable {
    case bool, int, float, string, object
    case named(String)
    case optional(IDLType)
    case array(IDLType)
    case map(IDLType)
    case structure([IDLField])
    case enumeration([String])
}

/// A struct field with the comment lines written directly above it (where tags such as
/// `@secret` live).
public struct IDLField: Hashable, Sendable {
    public var name: String
    public var type: IDLType
    public var doc: [String]
    public var line: Int
    public var column: Int
    public init(name: String, type: IDLType, doc: [String] = [], line: Int = 0, column: Int = 0) {
        self.name = name
        self.type = type
        self.doc = doc
        self.line = line
        self.column = column
    }
}

public struct IDLMember: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// `type Name (...)`: a struct or an enum.
        case type(IDLType)
        case method(input: [IDLField], output: [IDLField])
        case error([IDLField])
    }
    public var name: String
    public var kind: Kind
    public var doc: [String]
    /// Where the member's keyword starts.
    public var line = 0
    public var column = 0
}

public struct IDLInterface: Equatable, Sendable {
    public var name: String
    public var doc: [String]
    public var members: [IDLMember]
}

/// A fault in an interface file, at a 1-based line and column.
public struct IDLError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String
    public var description: String { "\(line):\(column): \(message)" }
    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }
}

public enum VarlinkIDL {
    /// Larger files are refused before parsing.
    public static let maximumBytes = 1 << 20
    /// Deeper nesting of anonymous structs, optionals and arrays is refused.
    public static let maximumDepth = 32

    public static func parse(_ text: String) throws(IDLError) -> IDLInterface {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumBytes else {
            throw IDLError(line: 1, column: 1, message: "interface file larger than \(maximumBytes) bytes")
        }
        var parser = Parser(bytes: bytes)
        return try parser.interface()
    }
}

private struct Parser {
    let bytes: [UInt8]
    var index = 0
    var line = 1
    var column = 1
    /// Comment lines seen since the last token, reset by a blank line.
    var pendingDoc: [String] = []

    init(bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ message: String) -> IDLError {
        IDLError(line: line, column: column, message: message)
    }

    mutating func advance() {
        if bytes[index] == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if bytes[index] & 0xC0 != 0x80 {
            column += 1
        }
        index += 1
    }

    /// Skips blanks and comments, collecting the comment lines directly above the next token.
    mutating func skip() {
        var newlines = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "#") {
                advance()
                var comment: [UInt8] = []
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                    comment.append(bytes[index])
                    advance()
                }
                var text = String(decoding: comment, as: UTF8.self)
                if text.first == " " { text.removeFirst() }
                pendingDoc.append(text)
                newlines = 0
            } else if byte == UInt8(ascii: "\n") {
                newlines += 1
                if newlines > 1 { pendingDoc = [] }
                advance()
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") {
                advance()
            } else {
                return
            }
        }
    }

    mutating func takeDoc() -> [String] {
        defer { pendingDoc = [] }
        return pendingDoc
    }

    mutating func peek() -> UInt8? {
        skip()
        return index < bytes.count ? bytes[index] : nil
    }

    mutating func expect(_ text: String) throws(IDLError) {
        skip()
        let want = Array(text.utf8)
        guard index + want.count <= bytes.count, Array(bytes[index..<index + want.count]) == want else {
            throw fail("expected '\(text)'")
        }
        for _ in want { advance() }
    }

    mutating func consume(_ text: String) -> Bool {
        skip()
        let want = Array(text.utf8)
        guard index + want.count <= bytes.count, Array(bytes[index..<index + want.count]) == want else { return false }
        for _ in want { advance() }
        return true
    }

    static func isLetter(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
    }
    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    /// A run of letters, digits, `_`, `.` and `-` (checked by the caller's rule).
    mutating func word(_ what: String) throws(IDLError) -> String {
        skip()
        let start = index
        while index < bytes.count,
              Self.isLetter(bytes[index]) || Self.isDigit(bytes[index]) || bytes[index] == UInt8(ascii: "_")
                || bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "-") {
            advance()
        }
        guard index > start else { throw fail("expected \(what)") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A member or type name: an upper-case letter, then letters and digits.
    mutating func typeName(_ what: String) throws(IDLError) -> String {
        skip()
        let (l, c) = (line, column)
        let name = try word(what)
        let u = Array(name.utf8)
        guard u[0] >= UInt8(ascii: "A"), u[0] <= UInt8(ascii: "Z"), u.allSatisfy({ Self.isLetter($0) || Self.isDigit($0) }) else {
            throw IDLError(line: l, column: c, message: "'\(name)' is not a valid \(what) (an upper-case letter, then letters and digits)")
        }
        return name
    }

    /// A field or enum value name: a letter, then letters, digits and single `_`.
    mutating func fieldName(_ what: String) throws(IDLError) -> String {
        skip()
        let (l, c) = (line, column)
        let name = try word(what)
        let u = Array(name.utf8)
        let valid = Self.isLetter(u[0]) && u.allSatisfy({ Self.isLetter($0) || Self.isDigit($0) || $0 == UInt8(ascii: "_") })
            && u.last != UInt8(ascii: "_") && !name.contains("__")
        guard valid else { throw IDLError(line: l, column: c, message: "'\(name)' is not a valid \(what)") }
        return name
    }

    mutating func interface() throws(IDLError) -> IDLInterface {
        skip()
        let doc = takeDoc()
        guard consume("interface") else { throw fail("expected 'interface'") }
        let (l, c) = (line, column + 1)
        let name = try word("an interface name")
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.allSatisfy({ !$0.isEmpty && $0.first != "-" && $0.last != "-" }),
              let first = name.utf8.first, Self.isLetter(first), !name.contains("_") else {
            throw IDLError(line: l, column: c, message: "'\(name)' is not a valid interface name (reverse domain, e.g. org.example.thing)")
        }
        var members: [IDLMember] = []
        var names: Set<String> = []
        while peek() != nil {
            let doc = takeDoc()
            let (ml, mc) = (line, column)
            var member: IDLMember
            if consume("type ") {
                let name = try typeName("type name")
                member = IDLMember(name: name, kind: .type(try structOrEnum(depth: 1)), doc: doc)
            } else if consume("method ") {
                let name = try typeName("method name")
                let input = try structure(depth: 1)
                try expect("->")
                let output = try structure(depth: 1)
                member = IDLMember(name: name, kind: .method(input: input, output: output), doc: doc)
            } else if consume("error ") {
                let name = try typeName("error name")
                member = IDLMember(name: name, kind: .error(try structure(depth: 1)), doc: doc)
            } else {
                throw fail("expected 'type', 'method' or 'error'")
            }
            member.line = ml
            member.column = mc
            guard names.insert(member.name).inserted else {
                throw IDLError(line: ml, column: mc, message: "'\(member.name)' is declared twice")
            }
            members.append(member)
        }
        guard members.contains(where: { if case .method = $0.kind { true } else { false } }) else {
            throw fail("an interface needs at least one method")
        }
        return IDLInterface(name: name, doc: doc, members: members)
    }

    /// `(name: type, …)`; `()` is the empty struct.
    mutating func structure(depth: Int) throws(IDLError) -> [IDLField] {
        guard case .structure(let fields) = try structOrEnum(depth: depth, allowEnum: false) else {
            throw fail("expected a struct")
        }
        return fields
    }

    mutating func structOrEnum(depth: Int, allowEnum: Bool = true) throws(IDLError) -> IDLType {
        guard depth <= VarlinkIDL.maximumDepth else { throw fail("types nested deeper than \(VarlinkIDL.maximumDepth)") }
        try expect("(")
        _ = takeDoc()
        if consume(")") { return .structure([]) }
        var fields: [IDLField] = []
        var values: [String] = []
        var seen: Set<String> = []
        var isEnum: Bool?
        repeat {
            skip()
            let doc = takeDoc()
            let (fl, fc) = (line, column)
            let name = try fieldName(isEnum == true ? "enum value" : "field name")
            guard seen.insert(name).inserted else { throw IDLError(line: fl, column: fc, message: "'\(name)' appears twice") }
            let hasType = consume(":")
            if isEnum == nil { isEnum = !hasType }
            if isEnum == true {
                guard !hasType else { throw fail("an enum's values have no type") }
                guard allowEnum else { throw IDLError(line: fl, column: fc, message: "expected 'name: type' (an enum is not allowed here)") }
                values.append(name)
            } else {
                guard hasType else { throw fail("expected ':' after field '\(name)'") }
                fields.append(IDLField(name: name, type: try type(depth: depth + 1), doc: doc, line: fl, column: fc))
            }
        } while consume(",")
        try expect(")")
        return isEnum == true ? .enumeration(values) : .structure(fields)
    }

    mutating func type(depth: Int) throws(IDLError) -> IDLType {
        guard depth <= VarlinkIDL.maximumDepth else { throw fail("types nested deeper than \(VarlinkIDL.maximumDepth)") }
        guard let next = peek() else { throw fail("expected a type, found the end of the file") }
        if next == UInt8(ascii: "?") {
            advance()
            if peek() == UInt8(ascii: "?") { throw fail("an optional of an optional is not allowed") }
            return .optional(try type(depth: depth + 1))
        }
        if next == UInt8(ascii: "[") {
            advance()
            if consume("]") { return .array(try type(depth: depth + 1)) }
            try expect("string")
            try expect("]")
            return .map(try type(depth: depth + 1))
        }
        if next == UInt8(ascii: "(") { return try structOrEnum(depth: depth + 1) }
        let (l, c) = (line, column)
        let name = try word("a type")
        switch name {
        case "bool": return .bool
        case "int": return .int
        case "float": return .float
        case "string": return .string
        case "object": return .object
        default:
            guard let first = name.utf8.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z"),
                  name.utf8.allSatisfy({ Self.isLetter($0) || Self.isDigit($0) }) else {
                throw IDLError(line: l, column: c, message: "unknown type '\(name)'")
            }
            return .named(name)
        }
    }
}

extension IDLInterface {
    /// Checks that every named type is declared in the interface.
    public func checkReferences(in text: String) throws(IDLError) {
        let declared = Set(members.compactMap { if case .type = $0.kind { $0.name } else { nil } })
        func walk(_ type: IDLType, line: Int) throws(IDLError) {
            switch type {
            case .named(let name):
                guard declared.contains(name) else { throw IDLError(line: line, column: 1, message: "type '\(name)' is not declared") }
            case .optional(let t), .array(let t), .map(let t): try walk(t, line: line)
            case .structure(let fields): for f in fields { try walk(f.type, line: f.line) }
            default: break
            }
        }
        for member in members {
            switch member.kind {
            case .type(let t): try walk(t, line: 0)
            case .method(let i, let o): for f in i + o { try walk(f.type, line: f.line) }
            case .error(let fields): for f in fields { try walk(f.type, line: f.line) }
            }
        }
    }
}
