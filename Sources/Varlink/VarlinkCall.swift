/// One method call received from a client.
///
/// ```swift
/// case "Store":
///     let service = try call.string("service")
///     let ttl = try call.optionalInt("ttl") ?? 3600
/// ```
///
/// `parameters` may carry secrets: do not log them or put them in errors.
public struct VarlinkCall: Sendable {
    /// The fully qualified method, e.g. `org.sortedvault.vault.Store`.
    public let method: String
    /// The interface part of ``method``, e.g. `org.sortedvault.vault`.
    public let interface: String
    /// The method name inside the interface, e.g. `Store`.
    public let member: String
    /// The call's parameters (empty when the client sent none or `null`), without the secret ones.
    public let parameters: [String: JSONValue]
    /// The secret parameters (``VarlinkInterface/secretParameters``) that were strings, by dotted
    /// path below `parameters`, as their decoder made them; they are not in ``parameters``.
    public let secrets: [String: any Sendable]
    /// The client wants no reply.
    public let oneway: Bool
    /// The client accepts several replies (`continues: true` on all but the last).
    public let more: Bool
    /// The client asks to leave varlink for another protocol after the reply.
    public let upgrade: Bool

    /// Creates a call; `method` must contain a dot, with the interface before the last one.
    public init(method: String, parameters: [String: JSONValue] = [:], secrets: [String: any Sendable] = [:], oneway: Bool = false,
                more: Bool = false, upgrade: Bool = false) {
        self.secrets = secrets
        self.method = method
        if let dot = method.lastIndex(of: ".") {
            self.interface = String(method[..<dot])
            self.member = String(method[method.index(after: dot)...])
        } else {
            self.interface = ""
            self.member = method
        }
        self.parameters = parameters
        self.oneway = oneway
        self.more = more
        self.upgrade = upgrade
    }
}

extension VarlinkCall {
    /// A required string parameter; throws ``VarlinkError/invalidParameter(_:)`` when absent or not a string.
    public func string(_ name: String) throws -> String {
        guard let value = try optionalString(name) else { throw VarlinkError.invalidParameter(name) }
        return value
    }

    /// An optional string parameter: nil when absent or `null`; throws when of another type.
    public func optionalString(_ name: String) throws -> String? {
        try optional(name, \.stringValue)
    }

    /// A required integer parameter; throws ``VarlinkError/invalidParameter(_:)`` when absent or not an integer.
    public func int(_ name: String) throws -> Int64 {
        guard let value = try optionalInt(name) else { throw VarlinkError.invalidParameter(name) }
        return value
    }

    /// An optional integer parameter: nil when absent or `null`; throws when of another type.
    public func optionalInt(_ name: String) throws -> Int64? {
        try optional(name, \.intValue)
    }

    /// A required boolean parameter; throws ``VarlinkError/invalidParameter(_:)`` when absent or not a boolean.
    public func bool(_ name: String) throws -> Bool {
        guard let value = try optionalBool(name) else { throw VarlinkError.invalidParameter(name) }
        return value
    }

    /// An optional boolean parameter: nil when absent or `null`; throws when of another type.
    public func optionalBool(_ name: String) throws -> Bool? {
        try optional(name, \.boolValue)
    }

    /// An optional object parameter: nil when absent or `null`; throws when of another type.
    public func optionalObject(_ name: String) throws -> [String: JSONValue]? {
        try optional(name, \.objectValue)
    }

    /// An optional array parameter: nil when absent or `null`; throws when of another type.
    public func optionalArray(_ name: String) throws -> [JSONValue]? {
        try optional(name, \.arrayValue)
    }

    private func optional<T>(_ name: String, _ extract: (JSONValue) -> T?) throws -> T? {
        guard let value = parameters[name], !value.isNull else { return nil }
        guard let typed = extract(value) else { throw VarlinkError.invalidParameter(name) }
        return typed
    }
}
