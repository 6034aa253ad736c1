import BoundedJSON
import VaultCrypto

/// The parameters of one received message, read by name with the interface's rules: each accessor
/// throws ``WireParameterError`` naming the parameter. Secret members were taken out of the frame
/// before it became `JSONValue`s and are read with ``secret(_:)``.
///
/// ```swift
/// let service = try parameters.string("service")
/// let secret = try parameters.secret("secret")
/// ```
public struct WireParameters: Sendable {
    public let values: [String: JSONValue]
    /// Secret members by dotted path below `parameters`.
    let secrets: [String: SecretField]
    /// The dotted path of this object (`provider.`), for error names and secret lookups.
    let prefix: String

    public init(_ values: [String: JSONValue], secrets: [String: SecretField] = [:], prefix: String = "") {
        self.values = values
        self.secrets = secrets
        self.prefix = prefix
    }

    private func invalid(_ name: String, _ rule: String) -> WireParameterError {
        WireParameterError(prefix + name, rule)
    }

    /// The member, nil when absent or null.
    private func value(_ name: String) -> JSONValue? {
        guard let value = values[name], !value.isNull else { return nil }
        return value
    }

    public func has(_ name: String) -> Bool { value(name) != nil || secrets[prefix + name] != nil }

    // MARK: Plain values

    /// The member, which must be there: `read` gives nil for an absent or null one.
    private func required<Value>(_ name: String,
                                 _ read: (String) throws(WireParameterError) -> Value?) throws(WireParameterError) -> Value {
        guard let value = try read(name) else { throw invalid(name, "is missing") }
        return value
    }

    /// The member converted, nil when absent or null; `rule` names the type when `convert` refuses it.
    private func optional<Value>(_ name: String, _ rule: String,
                                 _ convert: (JSONValue) -> Value?) throws(WireParameterError) -> Value? {
        guard let value = value(name) else { return nil }
        guard let converted = convert(value) else { throw invalid(name, rule) }
        return converted
    }

    public func string(_ name: String) throws(WireParameterError) -> String {
        try required(name, optionalString)
    }

    public func optionalString(_ name: String) throws(WireParameterError) -> String? {
        try optional(name, "must be a string") { $0.stringValue }
    }

    public func double(_ name: String) throws(WireParameterError) -> Double {
        try required(name, optionalDouble)
    }

    /// A finite number (JSON integers convert).
    public func optionalDouble(_ name: String) throws(WireParameterError) -> Double? {
        try optional(name, "must be a number") { value in value.doubleValue.flatMap { $0.isFinite ? $0 : nil } }
    }

    public func int(_ name: String) throws(WireParameterError) -> Int64 {
        try required(name, optionalInt)
    }

    public func optionalInt(_ name: String) throws(WireParameterError) -> Int64? {
        try optional(name, "must be an integer") { $0.intValue }
    }

    public func bool(_ name: String) throws(WireParameterError) -> Bool {
        try required(name, optionalBool)
    }

    public func optionalBool(_ name: String) throws(WireParameterError) -> Bool? {
        try optional(name, "must be a boolean") { $0.boolValue }
    }

    public func strings(_ name: String) throws(WireParameterError) -> [String] {
        guard let value = value(name) else { throw invalid(name, "is missing") }
        guard let array = value.arrayValue else { throw invalid(name, "must be an array of strings") }
        var result: [String] = []
        result.reserveCapacity(array.count)
        for element in array {
            guard let text = element.stringValue else { throw invalid(name, "must be an array of strings") }
            result.append(text)
        }
        return result
    }

    public func optionalStrings(_ name: String) throws(WireParameterError) -> [String]? {
        guard value(name) != nil else { return nil }
        return try strings(name)
    }

    public func optionalStringMap(_ name: String) throws(WireParameterError) -> [String: String]? {
        guard let value = value(name) else { return nil }
        guard let object = value.objectValue else { throw invalid(name, "must be an object of strings") }
        var result: [String: String] = [:]
        for (member, element) in object {
            guard let text = element.stringValue else { throw invalid(name, "must be an object of strings") }
            result[member] = text
        }
        return result
    }

    /// A JSON object kept as it is (a provider's token response).
    public func object(_ name: String) throws(WireParameterError) -> [String: JSONValue] {
        guard let value = value(name) else { throw invalid(name, "is missing") }
        guard let object = value.objectValue else { throw invalid(name, "must be an object") }
        return object
    }

    /// A nested object read with the same rules; its secrets are those under `name.`.
    public func nested(_ name: String) throws(WireParameterError) -> WireParameters? {
        let hasSecrets = secrets.keys.contains { $0.hasPrefix(prefix + name + ".") }
        guard let value = value(name) else {
            return hasSecrets ? WireParameters([:], secrets: secrets, prefix: prefix + name + ".") : nil
        }
        guard let object = value.objectValue else { throw invalid(name, "must be an object") }
        return WireParameters(object, secrets: secrets, prefix: prefix + name + ".")
    }

    public func array(_ name: String) throws(WireParameterError) -> [WireParameters] {
        guard let value = value(name) else { throw invalid(name, "is missing") }
        guard let array = value.arrayValue else { throw invalid(name, "must be an array") }
        var result: [WireParameters] = []
        for element in array {
            guard let object = element.objectValue else { throw invalid(name, "must be an array of objects") }
            result.append(WireParameters(object, prefix: prefix + name + "[]."))
        }
        return result
    }

    // MARK: Secrets

    /// A secret: standard base64 on the wire, here already decoded into secure memory.
    public func secret(_ name: String) throws(WireParameterError) -> SecureBytes {
        guard let secret = try optionalSecret(name) else { throw invalid(name, "is missing") }
        return secret
    }

    /// A secret carried as JSON text (``SecretLimits/text``), here already in secure memory.
    public func optionalTextSecret(_ name: String) throws(WireParameterError) -> SecureBytes? {
        switch secrets[prefix + name] {
        case .bytes(let bytes)?: return bytes
        case .invalid(let rule)?: throw invalid(name, rule)
        case nil: return nil
        }
    }

    public func optionalSecret(_ name: String) throws(WireParameterError) -> SecureBytes? {
        switch secrets[prefix + name] {
        case .bytes(let bytes)?: return bytes
        case .invalid(let rule)?: throw invalid(name, rule)
        case nil:
            // Not diverted: absent, null, or not a string at all.
            guard value(name) != nil else { return nil }
            throw invalid(name, "must be a base64 string")
        }
    }
}
