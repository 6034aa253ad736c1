/// A parameter that is missing, of the wrong type, or breaks a limit: the interfaces'
/// `InvalidParameter`. `reason` names the parameter and the rule, never the value (it may be a
/// secret).
///
/// ```swift
/// throw WireParameterError("passphrase", "is longer than 4096 bytes")
/// // reason: "passphrase is longer than 4096 bytes"
/// ```
public struct WireParameterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The parameter's name, dotted inside an object: `provider.clientSecret`.
    public let parameter: String
    /// What is wrong, starting with the parameter's name.
    public let reason: String

    public init(_ parameter: String, _ rule: String) {
        self.parameter = parameter
        self.reason = rule.hasPrefix(parameter) ? rule : "\(parameter) \(rule)"
    }

    public var description: String { "invalid parameter: \(reason)" }
}

/// A reply the peer sent that does not match the interface (a daemon of another version, or not
/// sortedvault): what was wrong, never the reply's values.
public struct WireReplyError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { "malformed reply: \(reason); check that client and daemon versions match" }
}
