/// Members whose values are objects of a typed value, both ways.
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
}
