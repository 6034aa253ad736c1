import BoundedJSON
import VaultCrypto

/// The members the generated types read and write beyond plain values: nested objects, arrays of
/// them, enums (as their string), and objects kept as JSON.
extension WireWriter {
    /// A member whose value is an object written by `value`.
    public mutating func field(_ name: String, _ value: some WireEncodable) {
        key(name)
        beginObject()
        value.encodeMembers(to: &self)
        endObject()
    }

    public mutating func field(_ name: String, _ value: (some WireEncodable)?) {
        if let value { field(name, value) }
    }

    public mutating func field<Element: WireEncodable>(_ name: String, _ value: [Element]) {
        key(name)
        beginArray()
        for element in value {
            beginObject()
            element.encodeMembers(to: &self)
            endObject()
        }
        endArray()
    }

    public mutating func field<Element: WireEncodable>(_ name: String, _ value: [Element]?) {
        if let value { field(name, value) }
    }

    public mutating func field<Value: RawRepresentable<String>>(_ name: String, _ value: Value) { field(name, value.rawValue) }

    public mutating func field<Value: RawRepresentable<String>>(_ name: String, _ value: Value?) {
        if let value { field(name, value.rawValue) }
    }

    /// An object kept as JSON, members in key order.
    public mutating func field(_ name: String, _ value: [String: JSONValue]) {
        key(name)
        beginObject()
        for (member, element) in value.sorted(by: { $0.key < $1.key }) {
            key(member)
            json(element)
        }
        endObject()
    }

    public mutating func field(_ name: String, _ value: [String: JSONValue]?) { if let value { field(name, value) } }
    public mutating func field(_ name: String, _ value: Bool?) { if let value { field(name, value) } }
    public mutating func field(_ name: String, _ value: [String]?) { if let value { field(name, value) } }
    public mutating func field(_ name: String, _ value: [String: String]?) { if let value { field(name, value) } }
}

extension WireParameters {
    /// A required member that is an object of type `T`.
    public func decode<T: WireDecodable>(_ name: String, as type: T.Type = T.self) throws(WireParameterError) -> T {
        guard let nested = try nested(name) else { throw WireParameterError(prefix + name, "is missing") }
        return try T(from: nested)
    }

    public func optionalDecode<T: WireDecodable>(_ name: String, as type: T.Type = T.self) throws(WireParameterError) -> T? {
        guard let nested = try nested(name) else { return nil }
        return try T(from: nested)
    }

    /// A required member that is an array of objects of type `T`.
    public func decodeArray<T: WireDecodable>(_ name: String, as type: T.Type = T.self) throws(WireParameterError) -> [T] {
        var result: [T] = []
        for element in try array(name) { result.append(try T(from: element)) }
        return result
    }

    public func optionalDecodeArray<T: WireDecodable>(_ name: String, as type: T.Type = T.self) throws(WireParameterError) -> [T]? {
        guard has(name) else { return nil }
        return try decodeArray(name)
    }

    /// A required member that is one of an enum's values, as its string.
    public func enumeration<T: RawRepresentable<String> & CaseIterable>(_ name: String, as type: T.Type = T.self) throws(WireParameterError) -> T {
        guard let value = try optionalEnumeration(name, as: T.self) else { throw WireParameterError(prefix + name, "is missing") }
        return value
    }

    public func optionalEnumeration<T: RawRepresentable<String> & CaseIterable>(_ name: String, as type: T.Type = T.self) throws(WireParameterError) -> T? {
        guard let text = try optionalString(name) else { return nil }
        guard let value = T(rawValue: text) else {
            throw WireParameterError(prefix + name, "must be one of " + T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
        }
        return value
    }

    public func stringMap(_ name: String) throws(WireParameterError) -> [String: String] {
        guard let map = try optionalStringMap(name) else { throw WireParameterError(prefix + name, "is missing") }
        return map
    }

    public func optionalObject(_ name: String) throws(WireParameterError) -> [String: JSONValue]? {
        guard has(name) else { return nil }
        return try object(name)
    }
}
