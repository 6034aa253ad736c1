/// Typed, line-aware access to a parsed table, for validating a file against its schema.
///
/// Every failure names the file, the line of the offending key (or of the table's header when a
/// key is missing) and what was expected.
struct TOMLTableReader {
    let table: TOMLTable
    let file: String
    /// How messages name this table: "[[rule]]", "[session]", "the top level".
    let name: String

    /// Refuses the first key, in file order, that is not in `known`.
    func rejectUnknownKeys(_ known: [String]) throws {
        for key in table.keys where !known.contains(key) {
            throw PolicyError(.unknownKey, file: file, line: table[key]!.line,
                              "unknown key '\(key)' in \(name); known keys: \(known.joined(separator: ", "))")
        }
    }

    func line(of key: String) -> Int { table[key]?.line ?? table.line }

    func value(_ key: String) throws -> TOMLValue? {
        guard let entry = table[key] else { return nil }
        guard case .value(let value) = entry.node else {
            throw PolicyError(.invalidValue, file: file, line: entry.line, "'\(key)' in \(name) must be a value, not a table")
        }
        return value
    }

    func required(_ key: String, example: String) throws -> TOMLValue {
        guard let value = try value(key) else {
            let at = table.line == 0 ? "" : " (the table starting here)"
            throw PolicyError(.missingKey, file: file, line: table.line == 0 ? nil : table.line,
                              "\(name)\(at) is missing the required key '\(key)'; add for example \(key) = \(example)")
        }
        return value
    }

    func string(_ key: String, _ value: TOMLValue, example: String) throws -> String {
        guard case .string(let text) = value else { throw typeError(key, value, expected: "a string such as \(example)") }
        return text
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = try value(key) else { return nil }
        guard case .integer(let number) = value else {
            throw typeError(key, value, expected: "an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        guard let result = Int(exactly: number), range.contains(result) else {
            throw PolicyError(.invalidValue, file: file, line: line(of: key),
                              "'\(key)' is \(number), outside the allowed range \(range.lowerBound)…\(range.upperBound)")
        }
        return result
    }

    func boolean(_ key: String) throws -> Bool? {
        guard let value = try value(key) else { return nil }
        guard case .boolean(let flag) = value else { throw typeError(key, value, expected: "true or false") }
        return flag
    }

    /// A non-empty array; `example` shows a valid one in the message.
    func array(_ key: String, _ value: TOMLValue, example: String) throws -> [TOMLValue] {
        guard case .array(let elements) = value else { throw typeError(key, value, expected: "an array such as \(example)") }
        if elements.isEmpty {
            throw PolicyError(.invalidValue, file: file, line: line(of: key),
                              "'\(key)' is an empty array, which matches nothing; list at least one entry such as \(example), or remove the key where it is optional")
        }
        return elements
    }

    func typeError(_ key: String, _ value: TOMLValue, expected: String) -> PolicyError {
        PolicyError(.invalidValue, file: file, line: line(of: key), "'\(key)' must be \(expected), not \(value.kind)")
    }

    func invalid(_ key: String, _ message: String) -> PolicyError {
        PolicyError(.invalidValue, file: file, line: line(of: key), message)
    }

    /// A sub-table such as `[session]`; `nil` when absent.
    func subtable(_ key: String) throws -> TOMLTableReader? {
        guard let entry = table[key] else { return nil }
        guard case .table(let sub) = entry.node else {
            throw PolicyError(.invalidValue, file: file, line: entry.line, "'\(key)' must be a table written as [\(key)]")
        }
        return TOMLTableReader(table: sub, file: file, name: "[\(key)]")
    }
}
