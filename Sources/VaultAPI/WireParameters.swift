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

    public func string(_ name: String) throws(WireParameterError) -> String {
        guard let text = try optionalString(name) else { throw invalid(name, "is missing") }
        return text
    }

    public func optionalString(_ name: String) throws(WireParameterError) -> String? {
        guard let value = value(name) else { return nil }
        guard let text = value.stringValue else { throw invalid(name, "must be a string") }
        return text
    }

    public func double(_ name: String) throws(WireParameterError) -> Double {
        guard let number = try optionalDouble(name) else { throw invalid(name, "is missing") }
        return number
    }

    /// A finite number (JSON integers convert).
    public func optionalDouble(_ name: String) throws(WireParameterError) -> Double? {
        guard let value = value(name) else { return nil }
        guard let number = value.doubleValue, number.isFinite else { throw invalid(name, "must be a number") }
        return number
    }

    public func int(_ name: String) throws(WireParameterError) -> Int64 {
        guard let number = try optionalInt(name) else { throw invalid(name, "is missing") }
        return number
    }

    public func optionalInt(_ name: String) throws(WireParameterError) -> Int64? {
        guard let value = value(name) else { return nil }
        guard let number = value.intValue else { throw invalid(name, "must be an integer") }
        return number
    }

    public func bool(_ name: String) throws(WireParameterError) -> Bool {
        guard let flag = try optionalBool(name) else { throw invalid(name, "is missing") }
        return flag
    }

    public func optionalBool(_ name: String) throws(WireParameterError) -> Bool? {
        guard let value = value(name) else { return nil }
        guard let flag = value.boolValue else { throw invalid(name, "must be a boolean") }
        return flag
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
