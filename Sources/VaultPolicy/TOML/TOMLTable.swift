/// A scalar or array value from a policy file: the TOML subset sortedvault accepts.
enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case boolean(Bool)
    /// Single-line, of scalars only (TOML 1.0 allows mixed types, which `uids` relies on).
    case array([TOMLValue])

    /// For messages: "a string", "an integer", …
    var kind: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .boolean: "a boolean"
        case .array: "an array"
        }
    }
}

/// What a key in a table holds.
enum TOMLNode: Sendable {
    case value(TOMLValue)
    case table(TOMLTable)
    case arrayOfTables([TOMLTable])
}

/// A key's content and the line that defined it (the header line for tables).
struct TOMLEntry: Sendable {
    var line: Int
    var node: TOMLNode
}

/// A TOML table that remembers where each key came from, so validation can name the line.
struct TOMLTable: Sendable {
    /// The line of the header that opened this table; 0 for the root table.
    var line: Int
    /// False for a table only implied by a dotted header (`[a.b]` implies `a`); TOML lets such a
    /// table be defined once later, but never an explicit one twice.
    var isExplicit: Bool
    private(set) var entries: [String: TOMLEntry] = [:]
    /// Keys in file order, so the first problem reported is the first in the file.
    private(set) var keys: [String] = []

    init(line: Int, isExplicit: Bool) {
        self.line = line
        self.isExplicit = isExplicit
    }

    subscript(key: String) -> TOMLEntry? {
        get { entries[key] }
        set {
            precondition(newValue != nil, "TOML tables only grow while parsing")
            if entries[key] == nil { keys.append(key) }
            entries[key] = newValue
        }
    }
}
