/// Parses the small TOML subset of sortedvault's policy and settings files.
///
/// ```swift
/// let root = try TOMLParser.parse(text, file: "access.toml")
/// ```
///
/// Accepted: `#` comments, `key = value`, `[table]`, `[[array.of.tables]]` with bare keys; basic and
/// literal strings, decimal integers, booleans and single-line arrays of those. Everything else TOML
/// allows (inline tables, multi-line strings, dotted or quoted keys, floats, dates) is refused with
/// "… is not supported", so a file accepted here means the same to every TOML 1.0 parser.
///
/// Bounded: ``maxFileBytes`` per file and ``maxLineBytes`` per line, checked before any parsing.
enum TOMLParser {
    static let maxFileBytes = 64 * 1024
    static let maxLineBytes = 4096

    static func parse(_ text: String, file: String) throws -> TOMLTable {
        let byteCount = text.utf8.count
        if byteCount > maxFileBytes {
            throw PolicyError(.tooLarge, file: file, "file is \(byteCount) bytes, more than the \(maxFileBytes)-byte limit; split it into several files")
        }
        var builder = Builder(file: file)
        for (offset, line) in lines(of: text).enumerated() {
            try builder.parse(line: line, number: offset + 1)
        }
        return builder.root
    }

    /// Splits at LF, accepting CRLF; a lone CR is refused later as a control character.
    private static func lines(of text: String) -> [[Unicode.Scalar]] {
        var lines: [[Unicode.Scalar]] = [[]]
        for c in text.unicodeScalars {
            if c == "\n" {
                if lines[lines.count - 1].last == "\r" { lines[lines.count - 1].removeLast() }
                lines.append([])
            } else {
                lines[lines.count - 1].append(c)
            }
        }
        return lines
    }

    private struct Builder {
        let file: String
        var root = TOMLTable(line: 0, isExplicit: true)
        /// Keys from the root to the table that `key = value` lines go into. A step that names an
        /// array of tables means its last element, as in TOML.
        var current: [String] = []

        init(file: String) { self.file = file }

        mutating func parse(line scalars: [Unicode.Scalar], number: Int) throws {
            let byteCount = scalars.reduce(0) { $0 + UTF8.width($1) }
            if byteCount > TOMLParser.maxLineBytes {
                throw PolicyError(.tooLarge, file: file, line: number, "line is \(byteCount) bytes, more than the \(TOMLParser.maxLineBytes)-byte limit; shorten it")
            }
            for (column, c) in scalars.enumerated() where (c.value < 0x20 && c != "\t") || c.value == 0x7F {
                throw PolicyError(.syntax, file: file, line: number, "control character \(TOMLLineScanner.printable(c)) at column \(column + 1); remove it (inside a basic string write it as an escape such as \\n)")
            }
            var scanner = TOMLLineScanner(scalars, file: file, line: number)
            if scanner.atEndOfContent() { return }
            if scanner.peek == "[" {
                try header(&scanner)
            } else {
                try keyValue(&scanner)
            }
        }

        private mutating func header(_ scanner: inout TOMLLineScanner) throws {
            let isArray = scanner.peek(1) == "["
            scanner.advance(isArray ? 2 : 1)
            var path: [String] = []
            repeat {
                if !path.isEmpty { scanner.advance() }  // .
                scanner.skipWhitespace()
                path.append(try scanner.bareKey())
                scanner.skipWhitespace()
            } while scanner.peek == "."
            let close = isArray ? "]]" : "]"
            if scanner.peek != "]" || (isArray && scanner.peek(1) != "]") {
                throw scanner.error(.syntax, "table header is not closed; write it as \(isArray ? "[[" : "[")\(path.joined(separator: "."))\(close)")
            }
            scanner.advance(isArray ? 2 : 1)
            if !scanner.atEndOfContent() {
                throw scanner.error(.syntax, "unexpected text after \(isArray ? "[[" : "[")\(path.joined(separator: "."))\(close); only a # comment may follow a header")
            }
            let name = (isArray ? "[[" : "[") + path.joined(separator: ".") + close
            try Self.define(in: &root, path: path[...], isArray: isArray, name: name, scanner: scanner)
            current = path
        }

        private static func define(in table: inout TOMLTable, path: ArraySlice<String>, isArray: Bool, name: String, scanner: TOMLLineScanner) throws {
            let key = path.first!
            let line = scanner.line
            guard var entry = table[key] else {
                if path.count == 1 {
                    let new = TOMLTable(line: line, isExplicit: true)
                    table[key] = TOMLEntry(line: line, node: isArray ? .arrayOfTables([new]) : .table(new))
                } else {
                    var implicit = TOMLTable(line: line, isExplicit: false)
                    try define(in: &implicit, path: path.dropFirst(), isArray: isArray, name: name, scanner: scanner)
                    table[key] = TOMLEntry(line: line, node: .table(implicit))
                }
                return
            }
            let defined = "\(name) conflicts with '\(key)', already defined at line \(entry.line); define each table once"
            switch entry.node {
            case .value:
                throw scanner.error(.duplicateKey, defined)
            case .table(var sub) where path.count > 1:
                try define(in: &sub, path: path.dropFirst(), isArray: isArray, name: name, scanner: scanner)
                entry.node = .table(sub)
            case .arrayOfTables(var list) where path.count > 1:
                try define(in: &list[list.count - 1], path: path.dropFirst(), isArray: isArray, name: name, scanner: scanner)
                entry.node = .arrayOfTables(list)
            case .table(var sub) where !isArray && !sub.isExplicit:
                sub.isExplicit = true
                sub.line = line
                entry.node = .table(sub)
            case .arrayOfTables(var list) where isArray:
                list.append(TOMLTable(line: line, isExplicit: true))
                entry.node = .arrayOfTables(list)
            default:
                throw scanner.error(.duplicateKey, defined)
            }
            table[key] = entry
        }

        private mutating func keyValue(_ scanner: inout TOMLLineScanner) throws {
            let key = try scanner.bareKey()
            scanner.skipWhitespace()
            if scanner.peek == "." { throw scanner.error(.unsupported, "a dotted key (\(key).… = …) is not supported in sortedvault policy files; use a [table] header") }
            guard scanner.peek == "=" else {
                throw scanner.error(.syntax, "expected '=' after key '\(key)'")
            }
            scanner.advance()
            scanner.skipWhitespace()
            let value = try scanner.value()
            if !scanner.atEndOfContent() {
                throw scanner.error(.syntax, "unexpected text after the value of '\(key)'; write one key = value per line, comments start with #")
            }
            try Self.insert(key: key, value: value, into: &root, path: current[...], scanner: scanner)
        }

        private static func insert(key: String, value: TOMLValue, into table: inout TOMLTable, path: ArraySlice<String>, scanner: TOMLLineScanner) throws {
            guard let step = path.first else {
                if let existing = table[key] {
                    throw scanner.error(.duplicateKey, "duplicate key '\(key)'; it is already defined at line \(existing.line)")
                }
                table[key] = TOMLEntry(line: scanner.line, node: .value(value))
                return
            }
            var entry = table[step]!
            switch entry.node {
            case .table(var sub):
                try insert(key: key, value: value, into: &sub, path: path.dropFirst(), scanner: scanner)
                entry.node = .table(sub)
            case .arrayOfTables(var list):
                try insert(key: key, value: value, into: &list[list.count - 1], path: path.dropFirst(), scanner: scanner)
                entry.node = .arrayOfTables(list)
            case .value:
                preconditionFailure("the current table path always names tables")
            }
            table[step] = entry
        }
    }
}
