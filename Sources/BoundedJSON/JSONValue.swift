/// A JSON document as the varlink wire format carries it.
///
/// Numbers without a fraction or exponent that fit in 64 bits are ``int(_:)``; every other number
/// is ``double(_:)``. Object key order is not kept: the writer emits keys sorted.
///
/// ```swift
/// let params: [String: JSONValue] = ["service": "github", "ttl": 3600, "tags": ["a", "b"]]
/// let ttl = params["ttl"]?.intValue   // 3600
/// ```
///
/// A `JSONValue` may hold secrets (a token in a `parameters` object), so its `description`
/// never prints string contents; use ``JSONValue/serialized()`` deliberately when you need the text.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    /// The string, or nil when this is not a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, or nil when this is not an integer.
    ///
    /// A double with no fraction that fits in `Int64` (as some encoders send `1.0` for `1`) is
    /// accepted too.
    public var intValue: Int64? {
        switch self {
        case .int(let value):
            return value
        case .double(let value):
            guard value.rounded() == value, let exact = Int64(exactly: value) else { return nil }
            return exact
        default:
            return nil
        }
    }

    /// The number as a double (integers convert), or nil when this is not a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The boolean, or nil when this is not a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The members, or nil when this is not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, or nil when this is not an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// True for `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key` of an object; nil when absent or when this is not an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue: CustomStringConvertible {
    /// The shape of the value with every string and number redacted, so that logging a value can
    /// never leak a secret: `{"token": <string>, "ttl": <number>}`.
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .int, .double: return "<number>"
        case .string: return "<string>"
        case .array(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .object(let members):
            let inner = members.keys.sorted().map { "\"\($0)\": \(members[$0]!.description)" }
            return "{" + inner.joined(separator: ", ") + "}"
        }
    }
}
